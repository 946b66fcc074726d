package corpus

import (
	"fmt"
	"testing"
)

// The text hash is a function of the seed and the bytes alone (another
// process gives the same value), tells lengths and single bytes apart, and
// strings hash as their bytes.
func TestTextHash(t *testing.T) {
	if got := TextHashString(1, "deploy the app"); got != TextHash(1, []byte("deploy the app")) {
		t.Fatal("a string hashes otherwise than its bytes")
	}
	seen := map[uint64]string{}
	for n := range 40 {
		for flip := -1; flip < n; flip++ {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte('a' + i%26)
			}
			if flip >= 0 {
				b[flip] ^= 1
			}
			for seed := uint64(1); seed <= 2; seed++ {
				h := TextHash(seed, b)
				key := fmt.Sprintf("%d %q", seed, b)
				if other, ok := seen[h]; ok {
					t.Fatalf("%s and %s hash alike", key, other)
				}
				seen[h] = key
			}
		}
	}
}

// A fixed value: a change of the function changes what entries on disk
// hold, which must bump the retriever's cacheFormat.
func TestTextHashIsFixed(t *testing.T) {
	if got := TextHash(42, []byte("the billing service")); got != textHashFixed {
		t.Fatalf("TextHash(42, ...) = %#x: the function changed; bump cacheFormat and this value", got)
	}
}

// textHashFixed is TextHash(42, "the billing service").
const textHashFixed = 0xc113a5fe038593
