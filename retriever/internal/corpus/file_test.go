package corpus

import (
	"bytes"
	"strings"
	"testing"
	"unsafe"

	"runls/retriever/internal/records"
)

func TestCheckOf(t *testing.T) {
	long := strings.Repeat("x", CheckBytes) + "y"
	for _, tc := range []struct {
		in, want string
	}{
		{"", ""},
		{"abc", "abc"},
		{long[:CheckBytes], long[:CheckBytes]},
		{long, long[:CheckBytes]}, // the first CheckBytes bytes
	} {
		c := CheckOf([]byte(tc.in))
		if got := c.Bytes(); string(got) != tc.want || c.Len() != len(tc.want) || cap(got) != len(got) {
			t.Errorf("CheckOf(%q) = %q (len %d, cap %d), want %q", tc.in, got, c.Len(), cap(got), tc.want)
		}
	}
	if CheckOf([]byte("ab")) != CheckOf([]byte("ab")) || CheckOf([]byte("ab")) == CheckOf([]byte("ab\x00")) {
		t.Error("checks of the same bytes differ, or of other lengths compare equal")
	}
}

// A file's pending tail: none kept is nil, an empty one kept is not; a
// clone starts without, and leaves the original's.
func TestPendingTail(t *testing.T) {
	var fs File
	fs.SetTail(nil)
	fs.SetTailDocs(nil)
	if fs.pending != nil || fs.Tail() != nil || fs.TailDocs() != nil {
		t.Fatal("nothing pending made a pending tail")
	}
	fs.SetTail([]byte{})
	if fs.Tail() == nil || len(fs.Tail()) != 0 {
		t.Fatal("an empty tail kept reads as none")
	}
	fs.SetTail([]byte("ab"))
	fs.SetTailDocs([]TailDoc{{Doc: 3}})
	n := fs.Clone()
	if n.Tail() != nil || n.TailDocs() != nil {
		t.Fatal("a clone has its original's pending tail")
	}
	n.SetTail([]byte("cd"))
	if !bytes.Equal(fs.Tail(), []byte("ab")) || len(fs.TailDocs()) != 1 {
		t.Fatal("a clone's tail changed its original's")
	}
}

// A file's state is at most 248 bytes (issue 33: at 100,000 files each byte
// is 100 KB of a reopened server's heap; it was 336, in a size class of
// 352): the episode and its number are cut of Rel, what only record files
// have is behind one pointer, and so are the record table, the columns in
// the mapping and the conversation ids, which most notes have none of.
func TestFileSize(t *testing.T) {
	if n := unsafe.Sizeof(File{}); n > 248 {
		t.Errorf("a File is %d bytes, want at most 248", n)
	}
}

// A clone's record table and conversation ids are its own: appending to
// them leaves the original's as they were.
func TestCloneOwnsItsColumns(t *testing.T) {
	var fs File
	fs.SetTable(&records.Table{})
	fs.AddConv(3)
	n := fs.Clone()
	n.AddConv(1)
	n.AddConv(5)
	if got := fs.Convs(); len(got) != 1 || got[0] != 3 {
		t.Errorf("the original's conversations: %v", got)
	}
	if got := n.Convs(); len(got) != 3 || got[0] != 1 || got[2] != 5 {
		t.Errorf("the clone's conversations: %v", got)
	}
	if n.Table() == fs.Table() || n.Table() == nil {
		t.Error("the clone shares its original's record table")
	}
	var note File
	note.SetTable(nil)
	note.SetConvs(nil)
	if note.cols != nil || note.Clone().cols != nil {
		t.Error("a note without records, conversations or mapped columns has them")
	}
}

// SetPath keeps a path whose episode is its first part and whose number
// ends the episode, and refuses any other (keeping the path, with no
// episode).
func TestSetPath(t *testing.T) {
	for _, tc := range []struct {
		rel, ep, num string
		ok           bool
	}{
		{"episode-7/alice/a.log", "episode-7", "7", true},
		{"episode-007/alice/a.log", "episode-007", "7", true},
		{"episode-000/alice/a.log", "episode-000", "0", true},
		{"episode-7/alice/a.log", "episode-8", "8", false},
		{"episode-7", "episode-7", "7", false},
		{"episode-7x/alice/a.log", "episode-7", "7", false},
		{"episode-17/alice/a.log", "episode-17", "2", false},
		{strings.Repeat("e", 256) + "/a/b", strings.Repeat("e", 256), "", false},
	} {
		var fs File
		if ok := fs.SetPath(tc.rel, tc.ep, tc.num); ok != tc.ok {
			t.Errorf("SetPath(%q, %q, %q) = %v", tc.rel, tc.ep, tc.num, ok)
			continue
		}
		ep, num := tc.ep, tc.num
		if !tc.ok {
			ep, num = "", ""
		}
		if fs.Rel != tc.rel || fs.Episode() != ep || fs.EpNum() != num {
			t.Errorf("SetPath(%q, %q, %q): %q %q %q", tc.rel, tc.ep, tc.num, fs.Rel, fs.Episode(), fs.EpNum())
		}
	}
}

// What a query's evidence filter and tie order read of every file they meet
// (retriever's fileVerdict and fileOrder: Agent, Form, Layout, epEnd and Rel's
// header) is in a File's first 32 bytes: one cache line, where a File is
// alone in its 256-byte size class, and mostly one in a restored slab of
// them (issue 33: the flags were two lines past Rel, a second miss a file
// for the tie order; cachegrind on the set without the context, 400
// searches: fileOrder's misses past L2 31.5k -> 14.6k).
func TestFileHotFieldsFirst(t *testing.T) {
	var f File
	for name, end := range map[string]uintptr{
		"Agent":  unsafe.Offsetof(f.Agent) + unsafe.Sizeof(f.Agent),
		"Form":   unsafe.Offsetof(f.Form) + unsafe.Sizeof(f.Form),
		"Layout": unsafe.Offsetof(f.Layout) + unsafe.Sizeof(f.Layout),
		"epEnd":  unsafe.Offsetof(f.epEnd) + unsafe.Sizeof(f.epEnd),
		"Rel":    unsafe.Offsetof(f.Rel) + unsafe.Sizeof(f.Rel),
	} {
		if end > 32 {
			t.Errorf("File.%s ends at byte %d, want within the first 32", name, end)
		}
	}
}
