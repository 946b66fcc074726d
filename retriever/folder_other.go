//go:build !linux

package retriever

import (
	"errors"
	"os"
)

// noFollowOpen: files are opened through the run folder's os.Root and each
// is checked (see folder).
const noFollowOpen = false

func openNoFollow(*os.File, string) (fileReader, error) {
	return nil, errors.New("not supported")
}
