// This file holds the manifest: an entry's commit point, naming the blobs of
// one consistent state and carrying the caller's own section, and its
// strict binary encoding.

package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// Manifest is one commit of an entry.
type Manifest struct {
	Generation uint64   // one more than the commit it replaced
	ConfigHash [32]byte // sha256 of the configuration bytes
	Config     []byte   // the configuration as the caller gave it (shown by `runls cache list`)
	RunPath    string   // the run folder's real path
	Blobs      []BlobRef
	Caller     []byte // opaque to the store: the retriever's file table and more; nil in an open entry's (Snapshot.Caller)
}

// Manifest format: header, body, footer.
//
//	magic "runlsMAN" | version u32 | zero u32 | body length u64
//	body: generation uvarint | config hash [32] | config bytes | run path bytes
//	      | blob count uvarint, each: name bytes, length uvarint, crc u32,
//	        chunk sums bytes (format 2: BlobRef.Chunks, "" or 4 bytes a chunk)
//	      | caller bytes            (bytes = uvarint length, then the bytes)
//	CRC-32C of everything before u32 | "mEND"
//
// Format 1 had no chunk sums: it is still read (its blobs are checked whole).
const (
	manifestMagic       = "runlsMAN"
	manifestFooterMagic = "mEND"
	manifestVersion     = 2
	manifestHeaderSize  = 24
	manifestFooterSize  = 8
	manifestName        = "manifest"
)

// ConfigHash is the hash an entry's manifest records for its configuration.
func ConfigHash(config []byte) [32]byte { return sha256.Sum256(config) }

// EncodeManifest serialises m.
func EncodeManifest(m *Manifest) []byte {
	var body []byte
	body = binary.AppendUvarint(body, m.Generation)
	body = append(body, m.ConfigHash[:]...)
	body = appendBytes(body, m.Config)
	body = appendBytes(body, []byte(m.RunPath))
	body = binary.AppendUvarint(body, uint64(len(m.Blobs)))
	for _, b := range m.Blobs {
		body = appendBytes(body, []byte(b.Name))
		body = binary.AppendUvarint(body, uint64(b.Length))
		body = binary.LittleEndian.AppendUint32(body, b.Checksum)
		body = appendBytes(body, []byte(b.Chunks))
	}
	body = appendBytes(body, m.Caller)

	out := make([]byte, 0, manifestHeaderSize+len(body)+manifestFooterSize)
	out = append(out, manifestMagic...)
	out = binary.LittleEndian.AppendUint32(out, manifestVersion)
	out = binary.LittleEndian.AppendUint32(out, 0)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(body)))
	out = append(out, body...)
	out = binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, castagnoli))
	return append(out, manifestFooterMagic...)
}

// DecodeManifest parses and checks a manifest: framing, checksum, every
// length against what is left, blob names of the store's own shape, no
// duplicate blob, nothing after the body. It never panics on any input.
func DecodeManifest(b []byte) (*Manifest, error) { return decodeManifest(b, true) }

// decodeManifest is DecodeManifest; without clone the caller section
// aliases b (a buffer the caller read for this decode alone).
func decodeManifest(b []byte, clone bool) (*Manifest, error) {
	version, err := checkManifestHeader(b, int64(len(b)))
	if err != nil {
		return nil, err
	}
	if err := checkManifestFooter(b, b[len(b)-manifestFooterSize:], crc32.Checksum(b[:len(b)-manifestFooterSize], castagnoli)); err != nil {
		return nil, err
	}
	d := decoder{b: b[manifestHeaderSize : len(b)-manifestFooterSize]}
	m, err := decodeManifestHead(&d, version, len(d.b))
	if err != nil {
		return nil, err
	}
	m.Caller = d.bytes()
	if clone {
		m.Caller = bytes.Clone(m.Caller)
	}
	if d.err != nil {
		return nil, fmt.Errorf("%w: manifest body: %v", ErrCorrupt, d.err)
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the manifest body", ErrCorrupt, len(d.b))
	}
	return m, nil
}

// manifestReadStep is how much of a manifest readManifestHead reads at a
// time: the body before the caller section fits in one (a few hundred
// bytes and 4 bytes a blob chunk of 64 KiB: some 1,600 bytes at 1 GB).
const manifestReadStep = 64 << 10

// readManifestHead reads and checks the manifest file f of size bytes as
// DecodeManifest checks it, the caller section included, and gives it
// without its caller section, which it never holds whole: the section's
// bytes are read through one buffer of step bytes (manifestReadStep) for
// the checksum.
// An open entry whose caller section stays on disk (Options.CallerOnDisk:
// a server's file table, 8.4 MB at 100,000 files) read it onto the heap,
// cloned it and dropped both: 16 MB of garbage at each reopen (issue 33).
func readManifestHead(f io.ReaderAt, size, step int64) (*Manifest, error) {
	step = max(step, 1) // a read of no bytes would never end
	if size < manifestHeaderSize+manifestFooterSize {
		return nil, fmt.Errorf("%w: manifest of %d bytes", errTruncated, size)
	}
	bodyEnd := size - manifestFooterSize
	bodyLen := int(bodyEnd - manifestHeaderSize)
	var (
		head    []byte
		m       *Manifest
		headErr error // the header's or the head's, said after the checksum's
		d       decoder
	)
	for n := min(size, max(step, manifestHeaderSize)); ; n = min(size, 2*n) {
		head = make([]byte, n)
		if _, err := f.ReadAt(head, 0); err != nil {
			return nil, fmt.Errorf("%w: %v", errTruncated, err)
		}
		if n == size { // a small manifest, or a head that never ended: decoded whole
			m, err := decodeManifest(head, false)
			if m != nil {
				m.Caller = nil
			}
			return m, err
		}
		var version uint32
		if version, headErr = checkManifestHeader(head, size); headErr != nil {
			return nil, headErr
		}
		d = decoder{b: head[manifestHeaderSize:min(n, bodyEnd)]}
		m, headErr = decodeManifestHead(&d, version, bodyLen)
		// Decoded, or refused once the checksum holds; but the caller
		// section's length, read from the head below, must be in it whole:
		// a head that ends inside it reads on, as a head cut short does.
		if _, k := binary.Uvarint(d.b); !errors.Is(headErr, errShort) && (headErr != nil || k != 0 || n >= bodyEnd) {
			break
		}
	}
	crc := crc32.Checksum(head[:min(int64(len(head)), bodyEnd)], castagnoli)
	buf := make([]byte, step)
	for off := int64(len(head)); off < bodyEnd; {
		p := buf[:min(int64(len(buf)), bodyEnd-off)]
		if _, err := f.ReadAt(p, off); err != nil {
			return nil, fmt.Errorf("%w: %v", errTruncated, err)
		}
		crc = crc32.Update(crc, castagnoli, p)
		off += int64(len(p))
	}
	foot := make([]byte, manifestFooterSize)
	if _, err := f.ReadAt(foot, bodyEnd); err != nil {
		return nil, fmt.Errorf("%w: %v", errTruncated, err)
	}
	if err := checkManifestFooter(head, foot, crc); err != nil {
		return nil, err
	}
	if headErr != nil {
		return nil, headErr
	}
	// What is left of the body after the caller section's length is the
	// section, and nothing after it.
	n := d.uvarint()
	if d.err != nil {
		return nil, fmt.Errorf("%w: manifest body: %v", ErrCorrupt, d.err)
	}
	left := uint64(len(d.b)) + uint64(bodyEnd-min(int64(len(head)), bodyEnd)) // in d, and not read into head
	if n > left {
		return nil, fmt.Errorf("%w: manifest body: %v", ErrCorrupt, errShort)
	}
	if n < left {
		return nil, fmt.Errorf("%w: %d bytes after the manifest body", ErrCorrupt, left-n)
	}
	return m, nil
}

// checkManifestHeader checks the header of a manifest file of size bytes
// whose first bytes are b, and gives its format version.
func checkManifestHeader(b []byte, size int64) (uint32, error) {
	if size < manifestHeaderSize+manifestFooterSize || len(b) < manifestHeaderSize {
		return 0, fmt.Errorf("%w: manifest of %d bytes", errTruncated, size)
	}
	if string(b[:8]) != manifestMagic {
		return 0, fmt.Errorf("%w: not a manifest (bad magic)", ErrCorrupt)
	}
	version := binary.LittleEndian.Uint32(b[8:])
	if version != manifestVersion && version != 1 {
		return 0, fmt.Errorf("%w: manifest format %d, want %d", ErrFormat, version, manifestVersion)
	}
	n := binary.LittleEndian.Uint64(b[16:])
	if n != uint64(size-manifestHeaderSize-manifestFooterSize) {
		return 0, fmt.Errorf("%w: manifest body of %d bytes, file holds %d", errTruncated, n, size-manifestHeaderSize-manifestFooterSize)
	}
	return version, nil
}

// checkManifestFooter checks foot, the footer of a manifest whose header
// is head's and whose bytes before the footer sum to crc; then the flags
// the checksum covers.
func checkManifestFooter(head, foot []byte, crc uint32) error {
	if string(foot[4:]) != manifestFooterMagic {
		return fmt.Errorf("%w: manifest footer", ErrCorrupt)
	}
	if crc != binary.LittleEndian.Uint32(foot) {
		return fmt.Errorf("%w: manifest checksum", ErrCorrupt)
	}
	if binary.LittleEndian.Uint32(head[12:]) != 0 {
		return fmt.Errorf("%w: manifest flags", ErrFormat)
	}
	return nil
}

// decodeManifestHead decodes the body before the caller section from d,
// which holds the body's first bytes (of bodyLen in all). A d that ends
// inside them is errShort, which only a partial body may give.
func decodeManifestHead(d *decoder, version uint32, bodyLen int) (*Manifest, error) {
	start := len(d.b)
	m := &Manifest{Generation: d.uvarint()}
	copy(m.ConfigHash[:], d.take(32))
	m.Config = bytes.Clone(d.bytes())
	m.RunPath = string(d.bytes())
	count := d.uvarint()
	// Each blob takes at least 1+1+4 bytes: a count past that is corrupt,
	// and checking it first keeps a hostile count from allocating.
	left := bodyLen - (start - len(d.b)) // of the whole body
	if d.err == nil && count > uint64(left)/6 {
		return nil, fmt.Errorf("%w: manifest names %d blobs in %d bytes", ErrCorrupt, count, left)
	}
	seen := make(map[string]bool, min(count, uint64(len(d.b))/6)) // d may hold part of the body
	for i := uint64(0); i < count && d.err == nil; i++ {
		ref := BlobRef{Name: string(d.bytes())}
		length := d.uvarint()
		ref.Checksum = d.uint32()
		if version > 1 {
			ref.Chunks = string(d.bytes())
		}
		if d.err != nil {
			break
		}
		if !validBlobName(ref.Name) || seen[ref.Name] {
			return nil, fmt.Errorf("%w: manifest blob name %q", ErrCorrupt, ref.Name)
		}
		if length > maxBlobLength {
			return nil, fmt.Errorf("%w: manifest blob length %d", ErrCorrupt, length)
		}
		if ref.Chunks != "" && uint64(len(ref.Chunks)) != 4*uint64(chunkCount(int64(length))) {
			return nil, fmt.Errorf("%w: manifest blob %s: %d bytes of chunk sums for %d bytes", ErrCorrupt, ref.Name, len(ref.Chunks), length)
		}
		ref.Length = int64(length)
		seen[ref.Name] = true
		m.Blobs = append(m.Blobs, ref)
	}
	if d.err != nil {
		return nil, fmt.Errorf("%w: manifest body: %w", ErrCorrupt, d.err)
	}
	return m, nil
}

// maxBlobLength bounds a length read from disk so that header+length+footer
// cannot overflow an int64.
const maxBlobLength = 1 << 56

func appendBytes(b, p []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(p)))
	return append(b, p...)
}

// decoder reads a byte string front to back, keeping the first error; after
// an error every read gives zero values, so a parse is a straight line.
type decoder struct {
	b   []byte
	err error
}

var errShort = errors.New("unexpected end")

func (d *decoder) fail(err error) {
	if d.err == nil {
		d.err = err
	}
	d.b = nil
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(errShort)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail(errShort)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) uint32() uint32 {
	p := d.take(4)
	if p == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(p)
}

// take is the next n bytes, aliasing the input.
func (d *decoder) take(n int) []byte {
	if n < 0 || n > len(d.b) {
		d.fail(errShort)
		return nil
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}

// bytes is a length-prefixed byte string, aliasing the input.
func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.fail(errShort)
		return nil
	}
	return d.take(int(n))
}
