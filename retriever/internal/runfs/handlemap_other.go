//go:build !linux

package runfs

// This file holds the mapping of a read-back handle's file off Linux:
// none, every read-back is a read (Handle.ReadMapped).

import "os"

// mapsFiles says that this system maps no handle's file.
const mapsFiles = false

func mapFile(*os.File, int64) []byte { return nil }

func unmapFile([]byte) {}
