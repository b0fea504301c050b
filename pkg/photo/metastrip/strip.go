package metastrip

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"sync"

	"github.com/geolocate-aws/geolocate/pkg/photo/imageformat"
)

// Kinds of what a Reader blanks, as reported in Report.Removed.
const (
	KindEXIF    = "exif"    // EXIF block (replaced by one holding only Orientation)
	KindXMP     = "xmp"     // XMP packet, extended XMP included
	KindIPTC    = "iptc"    // IPTC / Photoshop resources (JPEG APP13)
	KindComment = "comment" // JPEG COM segment
	KindText    = "text"    // PNG tEXt, zTXt, iTXt
	KindTime    = "time"    // PNG tIME (last modification)
	KindTrailer = "trailer" // bytes after the image's end (JPEG EOI, PNG IEND, RIFF size): secondary images, motion-photo video, vendor trailers
	KindPreview = "preview" // an embedded image that is not the picture sent: HEIF thumbnails and hidden previews, JFXX thumbnails
	KindOther   = "other"   // any other metadata segment, chunk, box or item (APPn, C2PA/JUMBF, private chunks, uuid boxes)
	KindJunk    = "junk"    // bytes between JPEG segments that belong to none
	KindUnread  = "unread"  // bytes after a structure the Reader could not follow (see Report.Problem)
)

// DefaultMaxHeaderBytes bounds what a Reader holds of a HEIF file: every box
// up to the end of the meta box, which says where the Exif and XMP items
// are. Phones write meta within the first tens of KiB.
const DefaultMaxHeaderBytes = 1 << 20

// maxEXIFPeek bounds how much of an EXIF block is held to find its
// Orientation tag: IFD0 comes first in every writer's layout, and a JPEG
// segment cannot be longer.
const maxEXIFPeek = 64 << 10

// bufferBytes is the Reader's read buffer: one whole JPEG segment (65,537
// bytes with its marker) fits, so a segment is peeked, never copied.
const bufferBytes = maxEXIFPeek + 4096

// Options configure a Reader.
type Options struct {
	// MaxHeaderBytes bounds the HEIF boxes held before the meta box ends
	// (DefaultMaxHeaderBytes). A file whose meta box ends later is not
	// followed: Report.Problem says so and nothing of it is sent readable.
	MaxHeaderBytes int
}

// ErrUnsupported is returned for a format the Reader cannot strip safely
// (GIF, TIFF) or does not recognise. BMP is not refused: it carries no
// metadata, so it passes unchanged.
var ErrUnsupported = errors.New("metastrip: format not supported")

// Problem is a structure the Reader could not follow. Everything from Offset
// on was replaced by zero bytes, so nothing unread is sent readable.
type Problem struct {
	Offset int64
	Reason string
}

func (p *Problem) Error() string {
	return fmt.Sprintf("metastrip: %s at byte %d", p.Reason, p.Offset)
}

// Removal is what was blanked of one kind.
type Removal struct {
	Kind  string
	Count int   // segments, chunks, boxes or items
	Bytes int64 // their bytes, headers included
}

// Report says what a Reader blanked. It is complete once the Reader has
// returned io.EOF.
type Report struct {
	Format  string    // imageformat name: jpeg, png, webp, heic, heif, avif, bmp
	Removed []Removal // by kind, in the order first met
	// Orientation is the EXIF Orientation kept (1 to 8); 0 when the photo
	// had no EXIF block.
	Orientation int
	// Truncated says the input ended inside a structure; the bytes it had
	// were handled like the rest.
	Truncated bool
	// Problem is set when the Reader met a structure it could not follow.
	Problem *Problem
	// Complete says the whole input was read.
	Complete bool
}

// Bytes is the total of Removed.
func (r Report) Bytes() int64 {
	var n int64
	for _, x := range r.Removed {
		n += x.Bytes
	}
	return n
}

// ByKind is Removed as kind -> bytes, the form a record keeps.
func (r Report) ByKind() map[string]int64 {
	if len(r.Removed) == 0 {
		return nil
	}
	m := make(map[string]int64, len(r.Removed))
	for _, x := range r.Removed {
		m[x.Kind] += x.Bytes
	}
	return m
}

// String is "exif 12034 B, xmp 3100 B" (kinds sorted), or "nothing".
func (r Report) String() string {
	m := r.ByKind()
	if len(m) == 0 {
		return "nothing"
	}
	kinds := make([]string, 0, len(m))
	for k := range m {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	parts := make([]string, 0, len(kinds))
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s %d B", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func (r *Report) add(kind string, count int, n int64) {
	if kind == "" || (count == 0 && n == 0) {
		return
	}
	for i := range r.Removed {
		if r.Removed[i].Kind == kind {
			r.Removed[i].Count += count
			r.Removed[i].Bytes += n
			return
		}
	}
	r.Removed = append(r.Removed, Removal{Kind: kind, Count: count, Bytes: n})
}

// op is one step of the output. Every op consumes as many input bytes as it
// outputs (an emit of bytes a stepper already read excepted), which is what
// keeps the output exactly as long as the input.
type op struct {
	kind    opKind
	n       int64  // opCopy, opFill: bytes
	toEnd   bool   // opCopy, opFill: up to the input's end, which is no truncation
	fill    byte   // opFill: the byte written
	what    string // opFill: the kind its bytes are counted as ("" none)
	data    []byte // opEmit: the bytes written
	consume bool   // opEmit: whether len(data) input bytes are discarded
}

type opKind int

const (
	opCopy opKind = iota
	opFill
	opEmit
)

// stepper is one format's walk: each call queues the ops for the next
// structure, returns io.EOF at the input's clean end, errTruncated when the
// input ended inside a structure, or a *Problem.
type stepper interface {
	step(r *Reader) error
}

var errTruncated = errors.New("metastrip: input ends inside a structure")

// Reader streams an image with its metadata blanked in place: every byte it
// returns replaces one byte of the input, so the output is exactly as long as
// the input (an HTTP upload keeps its Content-Length, and every offset inside
// the file, such as HEIF's iloc, stays valid). It holds one segment or chunk
// header at a time (at most 64 KiB), and for HEIF the boxes up to the end of
// meta (Options.MaxHeaderBytes). It never returns an error for the image's
// structure: what it cannot follow is zeroed and reported (Report.Problem).
// Read is not safe for concurrent use; Report is.
type Reader struct {
	src  *bufio.Reader
	opts Options
	fmt  stepper
	pos  int64 // input bytes consumed
	ops  []op
	// opsBuf backs ops between steps, so queueing a step's few ops does
	// not allocate.
	opsBuf [8]op
	done   bool
	err    error // a read error of the source, returned as it is

	mu  sync.Mutex // guards rep, which Report reads from any goroutine
	rep Report
}

// New returns a Reader stripping src, whose format it recognises from its
// first bytes (read at once). It returns ErrUnsupported, wrapped with the
// format's name, for GIF, TIFF and anything it does not recognise.
func New(src io.Reader, optFns ...func(*Options)) (*Reader, error) {
	opts := Options{MaxHeaderBytes: DefaultMaxHeaderBytes}
	for _, fn := range optFns {
		fn(&opts)
	}
	if opts.MaxHeaderBytes <= 0 {
		opts.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	br := bufio.NewReaderSize(src, bufferBytes)
	head, err := br.Peek(imageformat.SniffBytes)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("metastrip: read image: %w", err)
	}
	format, ok := imageformat.Detect(head)
	if !ok {
		return nil, fmt.Errorf("%w: not a recognised image", ErrUnsupported)
	}
	r := &Reader{src: br, opts: opts, rep: Report{Format: format.Name}}
	switch format {
	case imageformat.JPEG:
		r.fmt = &jpegStepper{}
	case imageformat.PNG:
		r.fmt = &pngStepper{}
	case imageformat.WebP:
		r.fmt = &webpStepper{}
	case imageformat.HEIC, imageformat.HEIF, imageformat.AVIF:
		r.fmt = &heifStepper{}
	case imageformat.BMP:
		r.fmt = passStepper{}
	default:
		return nil, fmt.Errorf("%w: %s carries metadata this package cannot remove without re-encoding", ErrUnsupported, format.Name)
	}
	return r, nil
}

// Report returns what has been blanked so far; complete after io.EOF.
func (r *Reader) Report() Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	rep := r.rep
	rep.Removed = append([]Removal(nil), r.rep.Removed...)
	return rep
}

// note changes the report under its lock.
func (r *Reader) note(change func(*Report)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	change(&r.rep)
}

// Read implements io.Reader.
func (r *Reader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && r.err == nil {
		if len(r.ops) == 0 {
			if r.done {
				break
			}
			r.next()
			continue
		}
		o := &r.ops[0]
		switch o.kind {
		case opEmit:
			k := min(len(o.data), len(p)-n)
			if o.consume {
				if k = r.discard(k); k == 0 && r.err == nil {
					r.endTruncated() // the input ended before the bytes this replaces
					continue
				}
			}
			copy(p[n:], o.data[:k])
			o.data = o.data[k:]
			if len(o.data) == 0 {
				r.ops = r.ops[1:]
			}
			n += k
		case opCopy:
			k, err := r.src.Read(p[n : n+int(min(o.n, int64(len(p)-n)))])
			r.pos += int64(k)
			o.n -= int64(k)
			n += k
			switch {
			case errors.Is(err, io.EOF):
				r.ops = r.ops[1:]
				if !o.toEnd && o.n > 0 {
					r.endTruncated()
				}
			case err != nil:
				r.err = err
			case o.n == 0:
				r.ops = r.ops[1:]
			}
			if k > 0 {
				// Hand the bytes on now rather than wait on the source again.
				return n, nil
			}
		case opFill:
			k := r.discard(int(min(o.n, int64(len(p)-n))))
			for i := range k {
				p[n+i] = o.fill
			}
			if o.what != "" && k > 0 {
				r.note(func(rep *Report) { rep.add(o.what, 0, int64(k)) })
			}
			o.n -= int64(k)
			n += k
			if k == 0 && r.err == nil && !o.toEnd {
				r.endTruncated() // the input ended inside what was to be filled
			} else if o.n == 0 || (k == 0 && r.err == nil) {
				r.ops = r.ops[1:]
			}
		}
	}
	if n > 0 {
		return n, nil
	}
	if r.err != nil {
		return 0, r.err
	}
	r.note(func(rep *Report) { rep.Complete = true })
	return 0, io.EOF
}

// discard consumes up to n input bytes and says how many it could; a read
// error other than the input's end is kept in r.err.
func (r *Reader) discard(n int) int {
	k, err := r.src.Discard(n)
	r.pos += int64(k)
	if err != nil && !errors.Is(err, io.EOF) {
		r.err = err
	}
	return k
}

// next asks the format for its next structure and handles how it ends.
func (r *Reader) next() {
	r.ops = r.opsBuf[:0]
	err := r.fmt.step(r)
	var p *Problem
	switch {
	case err == nil:
	case errors.Is(err, io.EOF):
		r.done = true
	case errors.Is(err, errTruncated):
		r.endTruncated()
	case errors.As(err, &p):
		// Zero everything from here on: what cannot be followed cannot be
		// told apart from metadata. The ops queued before it stay.
		r.note(func(rep *Report) {
			if rep.Problem == nil {
				rep.Problem = p
			}
		})
		r.fillRest(0, KindUnread)
		r.done = true
	default:
		r.err = err
	}
}

// endTruncated zeroes what is left of the input (fewer bytes than the
// structure they start) and ends.
func (r *Reader) endTruncated() {
	r.note(func(rep *Report) { rep.Truncated = true })
	r.ops = r.ops[:0]
	r.fillRest(0, "")
	r.done = true
}

// problem builds a *Problem at the input offset the queued ops lead to.
func (r *Reader) problem(format string, args ...any) *Problem {
	return &Problem{Offset: r.pos + r.queued(), Reason: fmt.Sprintf(format, args...)}
}

// queued is how many input bytes the queued ops will consume.
func (r *Reader) queued() int64 {
	var n int64
	for _, o := range r.ops {
		switch {
		case o.kind == opEmit && o.consume:
			n += int64(len(o.data))
		case o.kind != opEmit:
			n += o.n
		}
	}
	return n
}

func (r *Reader) copyN(n int64) {
	if n > 0 {
		r.ops = append(r.ops, op{kind: opCopy, n: n})
	}
}

func (r *Reader) copyRest() { r.ops = append(r.ops, op{kind: opCopy, n: math.MaxInt64, toEnd: true}) }

// fill replaces n input bytes with b, counting them as kind ("" for none).
func (r *Reader) fill(n int64, b byte, kind string) {
	if n > 0 {
		r.ops = append(r.ops, op{kind: opFill, n: n, fill: b, what: kind})
	}
}

// fillRest replaces everything left of the input with b.
func (r *Reader) fillRest(b byte, kind string) {
	r.ops = append(r.ops, op{kind: opFill, n: math.MaxInt64, toEnd: true, fill: b, what: kind})
}

// emit replaces len(data) input bytes with data.
func (r *Reader) emit(data []byte) {
	if len(data) > 0 {
		r.ops = append(r.ops, op{kind: opEmit, data: data, consume: true})
	}
}

// emitRead outputs data whose input bytes the stepper has already read.
func (r *Reader) emitRead(data []byte) {
	if len(data) > 0 {
		r.ops = append(r.ops, op{kind: opEmit, data: data})
	}
}

// removed counts one structure of kind and n bytes of it that fill ops do
// not count (fill ops count their bytes as they go).
func (r *Reader) removed(kind string, n int64) {
	r.note(func(rep *Report) { rep.add(kind, 1, n) })
}

// peek returns up to n of the next input bytes without consuming them:
// fewer only at the input's end.
func (r *Reader) peek(n int) ([]byte, error) {
	b, err := r.src.Peek(n)
	if errors.Is(err, io.EOF) || errors.Is(err, bufio.ErrBufferFull) {
		err = nil
	}
	return b, err
}

// need peeks exactly n bytes: io.EOF when the input has ended cleanly (no
// byte left), errTruncated when it ends within them.
func (r *Reader) need(n int) ([]byte, error) {
	b, err := r.peek(n)
	if err != nil {
		return nil, err
	}
	switch {
	case len(b) == n:
		return b, nil
	case len(b) == 0:
		return nil, io.EOF
	}
	return nil, errTruncated
}

// passStepper copies the whole input: a format without metadata (BMP).
type passStepper struct{}

func (passStepper) step(r *Reader) error {
	if b, err := r.peek(1); err != nil || len(b) == 0 {
		return cmpErr(err, io.EOF)
	}
	r.copyRest()
	return nil
}

// cmpErr is err, or otherwise when err is nil.
func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// Check runs a Reader over head, the first bytes of a file of size bytes, and
// returns its report, or an error when the file cannot be stripped: an
// unsupported format (ErrUnsupported), or a structure broken within head
// (*Problem). Run before paying for an upload, it turns away what the
// streaming Reader would have to send zeroed. When the file is longer than
// head, a HEIF header that does not end within head is a *Problem, so the
// streaming Reader must get no larger MaxHeaderBytes than len(head).
func Check(head []byte, size int64, optFns ...func(*Options)) (Report, error) {
	partial := size > int64(len(head))
	fns := append([]func(*Options){}, optFns...)
	if partial {
		fns = append(fns, func(o *Options) {
			if o.MaxHeaderBytes <= 0 || o.MaxHeaderBytes > len(head) {
				o.MaxHeaderBytes = len(head)
			}
		})
	}
	r, err := New(bytes.NewReader(head), fns...)
	if err != nil {
		return Report{}, err
	}
	if h, ok := r.fmt.(*heifStepper); ok {
		h.partial = partial
	}
	if _, err := io.Copy(io.Discard, r); err != nil {
		return r.Report(), fmt.Errorf("metastrip: check: %w", err)
	}
	rep := r.Report()
	if rep.Problem != nil {
		return rep, rep.Problem
	}
	return rep, nil
}
