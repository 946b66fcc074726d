package retriever

// This file holds fileStat: a file's stat as discovery lists it and plan
// reads it, kept as a value.

import "io/fs"

// fileStat is what discovery keeps of a file's stat: a value of a few words.
// An fs.FileInfo is an object of some 200 bytes with pointers, which each
// candidate held for as long as its file's task lived: at 100,000 files,
// 20 MB of the first indexing's live heap that every collection marked
// again (issue 13).
type fileStat struct {
	size         int64
	mtime, ctime int64 // unix ns; ctime is 0 where the system does not tell it
	dev, ino     uint64
	nlink        uint64 // 1 where the system does not tell it
	mode         fs.FileMode
}

// statOf returns info's fileStat.
func statOf(info fs.FileInfo) fileStat {
	s := fileStat{size: info.Size(), mtime: info.ModTime().UnixNano(), ctime: fileCtime(info), nlink: links(info), mode: info.Mode()}
	s.dev, s.ino = fileID(info)
	return s
}
