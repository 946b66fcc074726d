package runfs

// This file holds Stat: a file's stat as discovery lists it and plan
// reads it, kept as a value.

import "io/fs"

// Stat is what discovery keeps of a file's stat: a value of a few words.
// An fs.FileInfo is an object of some 200 bytes with pointers, which each
// candidate held for as long as its file's task lived: at 100,000 files,
// 20 MB of the first indexing's live heap that every collection marked
// again (issue 13).
type Stat struct {
	Size         int64
	Mtime, Ctime int64 // unix ns; Ctime is 0 where the system does not tell it
	Dev, Ino     uint64
	Nlink        uint64 // 1 where the system does not tell it
	Mode         fs.FileMode
}

// StatOf returns info's Stat.
func StatOf(info fs.FileInfo) Stat {
	s := Stat{Size: info.Size(), Mtime: info.ModTime().UnixNano(), Ctime: FileCtime(info), Nlink: Links(info), Mode: info.Mode()}
	s.Dev, s.Ino = FileID(info)
	return s
}
