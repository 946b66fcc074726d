package corpus

import (
	"bytes"
	"strings"
	"testing"
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
