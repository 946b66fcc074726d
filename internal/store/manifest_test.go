package store

import (
	"bytes"
	"errors"
	"reflect"
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
