package corpus

// This file holds the hash of pieces' and told messages' text: a piece's
// key (the "given once" key, and the check that its text read back from
// the file is still the text indexed, the retriever's result.go) and a told piece's message
// hash are kept in the segments, which the persisted index writes to disk
// and another process reads back (issue 18). hash/maphash cannot be that
// hash: its values depend on a per-process key of the runtime, whatever the
// seed. This one is a fixed function of a seed the index keeps with its
// state: 16 bytes a step, each pair of words folded by a 128-bit multiply
// (as wyhash does), the length in the last step. It guards against chance,
// not an adversary (who could write the agents' files to collide anyway).

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strings"
	"unsafe"
)

const (
	hashK1 = 0xa0761d6478bd642f
	hashK2 = 0xe7037ed1a0b428db
	hashK3 = 0x8ebc6af09c88c6e3
)

// hashMix folds two words into one.
func hashMix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}

// TextHash hashes b under seed.
func TextHash(seed uint64, b []byte) uint64 {
	h := seed ^ hashK1
	n := uint64(len(b))
	for len(b) > 16 {
		h = hashMix(binary.LittleEndian.Uint64(b)^hashK2, binary.LittleEndian.Uint64(b[8:])^h)
		b = b[16:]
	}
	var last [16]byte
	copy(last[:], b)
	h = hashMix(binary.LittleEndian.Uint64(last[:])^hashK2, binary.LittleEndian.Uint64(last[8:])^h)
	return hashMix(h^n, hashK3^seed)
}

// TextHashString hashes s as TextHash hashes its bytes.
func TextHashString(seed uint64, s string) uint64 {
	return TextHash(seed, unsafe.Slice(unsafe.StringData(s), len(s)))
}

// PieceKey is a piece's "given once" key: its text's hash with the text's
// surrounding white space left out (spec §3 rev 3: a trajectory that keeps
// each message at two indentation depths gives it once).
func PieceKey(seed uint64, text []byte) uint64 { return TextHash(seed, bytes.TrimSpace(text)) }

// PieceKeyString is PieceKey of a string.
func PieceKeyString(seed uint64, text string) uint64 {
	return TextHashString(seed, strings.TrimSpace(text))
}
