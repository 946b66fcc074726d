//go:build !linux

package retriever

import "io/fs"

// fileCtime is 0 where the inode's change time is not read: a rewrite that
// set the modification time back is then not seen, as following (§7).
func fileCtime(info fs.FileInfo) int64 { return 0 }
