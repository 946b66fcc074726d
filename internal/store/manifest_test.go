package store

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func sampleManifest() *Manifest {
	return &Manifest{
		Generation: 7,
		ConfigHash: ConfigHash([]byte("mask=off")),
		Config:     []byte("mask=off"),
		RunPath:    "/runs/r1",
		Blobs: []BlobRef{
			{Name: "b-0123456789abcdef01234567.blob", Length: 10, Checksum: 0xdeadbeef},
			{Name: "b-76543210fedcba9876543210.blob", Length: 0, Checksum: 0},
		},
		Caller: []byte("file table"),
	}
}

func TestManifestRoundTrip(t *testing.T) {
	for _, m := range []*Manifest{sampleManifest(), {RunPath: "/"}} {
		got, err := DecodeManifest(EncodeManifest(m))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(normManifest(got), normManifest(m)) {
			t.Fatalf("got %+v, want %+v", got, m)
		}
	}
}

// TestDecodeManifestRejects: every cut and every flipped bit of a
// manifest is refused as corrupt (the checksum covers all of it), and a
// manifest that checksums but breaks a rule is refused too.
func TestDecodeManifestRejects(t *testing.T) {
	good := EncodeManifest(sampleManifest())
	for n := 0; n < len(good); n++ {
		if _, err := DecodeManifest(good[:n]); !errors.Is(err, ErrCorrupt) {
			t.Errorf("cut to %d: %v", n, err)
		}
	}
	for i := range good {
		for bit := 0; bit < 8; bit++ {
			bad := bytes.Clone(good)
			bad[i] ^= 1 << bit
			if _, err := DecodeManifest(bad); !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrFormat) {
				t.Errorf("byte %d bit %d: %v", i, bit, err)
			}
		}
	}
	rule := map[string]func(*Manifest){
		"bad blob name": func(m *Manifest) { m.Blobs[0].Name = "../lock" },
		"blob twice":    func(m *Manifest) { m.Blobs[1].Name = m.Blobs[0].Name },
		"huge length":   func(m *Manifest) { m.Blobs[0].Length = 1 << 60 },
	}
	for name, edit := range rule {
		m := sampleManifest()
		edit(m)
		if _, err := DecodeManifest(EncodeManifest(m)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
	other := bytes.Clone(good)
	other[8] = 9 // version 9, checksum fixed up
	if _, err := DecodeManifest(resum(other)); !errors.Is(err, ErrFormat) {
		t.Errorf("other version: %v", err)
	}
}

// FuzzDecodeManifest: no input panics; whatever decodes encodes back to
// a manifest that decodes the same.
func FuzzDecodeManifest(f *testing.F) {
	f.Add(EncodeManifest(sampleManifest()))
	f.Add(EncodeManifest(&Manifest{}))
	f.Add([]byte("runlsMAN"))
	f.Fuzz(func(t *testing.T, data []byte) {
		// Most mutations break the checksum; fix it up so the fuzzer
		// reaches the body's parser too.
		for _, in := range [][]byte{data, resum(bytes.Clone(data))} {
			m, err := DecodeManifest(in)
			sameHead(t, in, m, err)
			if err != nil {
				if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrFormat) {
					t.Fatalf("error %v is neither ErrCorrupt nor ErrFormat", err)
				}
				continue
			}
			again, err := DecodeManifest(EncodeManifest(m))
			if err != nil {
				t.Fatalf("re-encoded manifest: %v", err)
			}
			if !reflect.DeepEqual(normManifest(again), normManifest(m)) {
				t.Fatalf("round trip: %+v, then %+v", m, again)
			}
		}
	})
}

// resum fixes a manifest's body length and checksum after an edit.
func resum(b []byte) []byte {
	if len(b) < manifestHeaderSize+manifestFooterSize {
		return b
	}
	putUint64(b[16:], uint64(len(b)-manifestHeaderSize-manifestFooterSize))
	putUint32(b[len(b)-manifestFooterSize:], crc32c(b[:len(b)-manifestFooterSize]))
	copy(b[len(b)-4:], manifestFooterMagic)
	return b
}

// normManifest makes empty and nil slices alike for comparison.
func normManifest(m *Manifest) Manifest {
	c := *m
	if len(c.Config) == 0 {
		c.Config = nil
	}
	if len(c.Caller) == 0 {
		c.Caller = nil
	}
	if len(c.Blobs) == 0 {
		c.Blobs = nil
	}
	return c
}

// sameHead: readManifestHead, which reads a manifest but for its caller
// section, by steps, agrees with DecodeManifest on b (its answer m, err)
// at every step: the same manifest without the caller section, or an
// error of the same kind.
func sameHead(t *testing.T, b []byte, m *Manifest, err error) {
	t.Helper()
	for _, step := range []int64{1, 7, 16, 64, 1 << 20} {
		got, gotErr := readManifestHead(bytes.NewReader(b), int64(len(b)), step)
		switch {
		case (err == nil) != (gotErr == nil),
			errors.Is(err, ErrCorrupt) != errors.Is(gotErr, ErrCorrupt),
			errors.Is(err, ErrFormat) != errors.Is(gotErr, ErrFormat):
			t.Fatalf("step %d: %v, DecodeManifest: %v", step, gotErr, err)
		case err != nil:
			continue
		}
		want := *m
		want.Caller = nil
		if !reflect.DeepEqual(normManifest(got), normManifest(&want)) {
			t.Fatalf("step %d: %+v, DecodeManifest: %+v", step, got, m)
		}
	}
}

// TestReadManifestHead: a manifest whose caller section is some steps
// long, and one whose blobs take more than a step, read without their
// caller sections agree with DecodeManifest, as do every cut of them and
// bytes flipped throughout (with the checksum fixed up and without).
func TestReadManifestHead(t *testing.T) {
	long := sampleManifest()
	long.Caller = bytes.Repeat([]byte("file table "), 300)
	many := sampleManifest()
	for i := range 200 {
		many.Blobs = append(many.Blobs, BlobRef{Name: fmt.Sprintf("b-%024x.blob", i), Length: ChunkSize + 1, Chunks: "abcdefgh"})
	}
	for _, m := range []*Manifest{long, many} {
		good := EncodeManifest(m)
		decoded, err := DecodeManifest(good)
		must(t, err)
		sameHead(t, good, decoded, err)
		for n := 0; n < len(good); n += 1 + n/50 {
			bad := good[:n]
			m, err := DecodeManifest(bad)
			sameHead(t, bad, m, err)
		}
		for i := 0; i < len(good); i += 1 + i/40 {
			bad := bytes.Clone(good)
			bad[i] ^= 0x41
			for _, in := range [][]byte{bad, resum(bytes.Clone(bad))} {
				m, err := DecodeManifest(in)
				sameHead(t, in, m, err)
			}
		}
	}
	// Valid manifests whose head ends at every offset of a step, among them
	// inside the caller section's length (a varint of three bytes for a
	// section of 70,000): each read as DecodeManifest reads it. Before the
	// mend, the head ending inside that length refused the manifest as
	// corrupt.
	for pad := range 80 {
		m := sampleManifest()
		m.RunPath = "/runs/" + strings.Repeat("p", pad)
		m.Caller = bytes.Repeat([]byte("c"), 70_000)
		good := EncodeManifest(m)
		decoded, err := DecodeManifest(good)
		must(t, err)
		sameHead(t, good, decoded, err)
	}
}
