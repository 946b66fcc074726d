package retriever

import (
	"io/fs"
	"syscall"
)

// fileCtime is a file's inode change time (unix ns): a rewrite that set
// the modification time back still moves it.
func fileCtime(info fs.FileInfo) int64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano()
	}
	return 0
}
