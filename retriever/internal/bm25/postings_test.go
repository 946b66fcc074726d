package bm25

import "testing"

// FuzzDecodeFrom: a posting list's fast decoding (decodeFrom from the
// list's start, which reads several bytes at once) gives the postings it
// was written from, as the iterator does, whatever the sizes of deltas and
// tfs and however the list ends. The input is taken as (delta, tf) pairs
// of varying widths.
func FuzzDecodeFrom(f *testing.F) {
	f.Add([]byte{1, 1, 2, 1, 3, 2})
	f.Add([]byte{0xff, 0xff, 0x7f, 0x01, 0x80, 0x02, 0x05, 0x90, 0x01})
	f.Add([]byte{0x7f, 0x01, 0x7f, 0x7f, 0x7f, 0x80, 0x00, 0x01})
	f.Fuzz(func(t *testing.T, data []byte) {
		var post []byte
		var wantDocs, wantTFs []uint32
		last := ^uint32(0)
		for i := 0; i+1 < len(data); i += 2 {
			// Widths from one byte to three or more, for deltas and tfs.
			delta := uint64(data[i]) << (7 * (data[i] >> 6) % 20)
			delta = delta%(1<<22) + 1
			tf := uint32(data[i+1])<<(7*(data[i+1]>>7)) + 1
			if uint64(last+1)+delta > 1<<31 {
				break
			}
			doc := last + uint32(delta)
			post = appendPosting(post, delta, tf)
			last = doc
			wantDocs, wantTFs = append(wantDocs, doc), append(wantTFs, tf)
		}
		docs, tfs := decodeFrom(post, ^uint32(0), []uint32{7}, []uint32{7})
		if len(docs) != len(wantDocs)+1 || len(tfs) != len(docs) || docs[0] != 7 || tfs[0] != 7 {
			t.Fatalf("decoded %d postings after the first, want %d", len(docs)-1, len(wantDocs))
		}
		it := newPostingIter(post)
		for k := range wantDocs {
			if docs[k+1] != wantDocs[k] || tfs[k+1] != wantTFs[k] {
				t.Fatalf("posting %d: decoded (%d, %d), want (%d, %d)", k, docs[k+1], tfs[k+1], wantDocs[k], wantTFs[k])
			}
			if !it.next() || it.doc != wantDocs[k] || it.tf != wantTFs[k] {
				t.Fatalf("posting %d: iterator at (%d, %d), want (%d, %d)", k, it.doc, it.tf, wantDocs[k], wantTFs[k])
			}
		}
	})
}
