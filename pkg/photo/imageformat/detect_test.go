package imageformat

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// pad extends a header to the given length with zero bytes so that it
// passes the minimum-length rule on its own merits.
func pad(b []byte, n int) []byte {
	out := make([]byte, n)
	copy(out, b)
	return out
}

func ftyp(major string, compatible ...string) []byte {
	size := 16 + 4*len(compatible)
	b := make([]byte, 0, size)
	b = binary.BigEndian.AppendUint32(b, uint32(size))
	b = append(b, "ftyp"...)
	b = append(b, major...)
	b = append(b, 0, 0, 0, 0)
	for _, c := range compatible {
		b = append(b, c...)
	}
	return pad(b, 64)
}

func bmpHeader(dibSize uint32) []byte {
	b := make([]byte, 64)
	copy(b, "BM")
	binary.LittleEndian.PutUint32(b[2:], 1234)
	binary.LittleEndian.PutUint32(b[10:], 54)
	binary.LittleEndian.PutUint32(b[14:], dibSize)
	return b
}

func TestDetect(t *testing.T) {
	tests := []struct {
		name string
		head []byte
		want Format
		ok   bool
	}{
		{"jpeg", pad([]byte{0xFF, 0xD8, 0xFF, 0xE0}, 64), JPEG, true},
		{"png", pad([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), 64), PNG, true},
		{"gif87a", pad([]byte("GIF87a"), 40), GIF, true},
		{"gif89a", pad([]byte("GIF89a"), 40), GIF, true},
		{"webp", pad([]byte("RIFF\x24\x00\x00\x00WEBPVP8 "), 40), WebP, true},
		{"riff but wave", pad([]byte("RIFF\x24\x00\x00\x00WAVEfmt "), 40), Format{}, false},
		{"tiff little endian", pad([]byte("II*\x00\x08\x00\x00\x00"), 40), TIFF, true},
		{"tiff big endian", pad([]byte("MM\x00*\x00\x00\x00\x08"), 40), TIFF, true},
		{"bmp", bmpHeader(40), BMP, true},
		{"bmp v5", bmpHeader(124), BMP, true},
		{"text starting with BM", pad([]byte("BMW owners club meeting notes, 2024"), 64), Format{}, false},
		{"heic major", ftyp("heic", "mif1", "heic"), HEIC, true},
		{"heix major", ftyp("heix", "mif1"), HEIC, true},
		{"hevc major", ftyp("hevc"), HEIC, true},
		{"mif1 major with heic compatible", ftyp("mif1", "mif1", "heic"), HEIC, true},
		{"heif mif1 only", ftyp("mif1", "mif1"), HEIF, true},
		{"heif msf1", ftyp("msf1"), HEIF, true},
		{"avif", ftyp("avif", "mif1", "miaf"), AVIF, true},
		{"avis", ftyp("avis", "msf1"), AVIF, true},
		{"mp4 is not an image", ftyp("isom", "iso2", "mp41"), Format{}, false},
		{"ftyp with bad box size", append([]byte{0, 0, 0, 3}, pad([]byte("ftypheic"), 60)...), Format{}, false},
		{"empty", nil, Format{}, false},
		{"truncated jpeg", []byte{0xFF, 0xD8, 0xFF, 0xE0, 0, 0x10}, Format{}, false},
		{"31 bytes of png", pad([]byte("\x89PNG\r\n\x1a\n"), 31), Format{}, false},
		{"32 bytes of png", pad([]byte("\x89PNG\r\n\x1a\n"), 32), PNG, true},
		{"text", []byte("hello world, this is definitely not an image file at all"), Format{}, false},
		{"json", []byte(`{"message_code":"success","data":{"prediction":{}}}`), Format{}, false},
		{"zeros", make([]byte, 512), Format{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Detect(tt.head)
			if ok != tt.ok || got != tt.want {
				t.Fatalf("Detect() = %v, %v; want %v, %v", got, ok, tt.want, tt.ok)
			}
			if ok && (got.MIME == "" || got.Extension == "" || got.String() != got.Name) {
				t.Fatalf("format %+v is incomplete", got)
			}
		})
	}
}

func TestDetectLooksAtMostSniffBytes(t *testing.T) {
	// An ftyp box claiming to be large, with its only HEIC brand beyond the
	// sniff window, must not be recognised from bytes Detect should ignore.
	b := make([]byte, 0, 1024)
	b = binary.BigEndian.AppendUint32(b, 1024)
	b = append(b, "ftypisom\x00\x00\x00\x00"...)
	b = append(b, bytes.Repeat([]byte("iso2"), (SniffBytes-16)/4)...)
	b = append(b, "heic"...)
	b = pad(b, 1024)
	if f, ok := Detect(b); ok {
		t.Fatalf("Detect() = %v; brand past %d bytes must be ignored", f, SniffBytes)
	}
	if f, ok := Detect(b[:SniffBytes+4]); ok {
		t.Fatalf("Detect() = %v on a %d byte slice; want not an image", f, SniffBytes+4)
	}
}

func TestMIMETypes(t *testing.T) {
	want := map[Format]string{
		JPEG: "image/jpeg", PNG: "image/png", GIF: "image/gif", WebP: "image/webp",
		HEIC: "image/heic", HEIF: "image/heif", AVIF: "image/avif", TIFF: "image/tiff", BMP: "image/bmp",
	}
	for f, mime := range want {
		if f.MIME != mime {
			t.Errorf("%s MIME = %q, want %q", f.Name, f.MIME, mime)
		}
	}
}

func TestDefaultMaxImageBytesIsTenMillion(t *testing.T) {
	// The contract's "10 MB" is SI: 10 MiB is over the limit.
	if DefaultMaxImageBytes != 10_000_000 {
		t.Errorf("DefaultMaxImageBytes = %d, want 10000000", DefaultMaxImageBytes)
	}
}

func FuzzDetect(f *testing.F) {
	f.Add([]byte{})
	f.Add(pad([]byte{0xFF, 0xD8, 0xFF}, 32))
	f.Add(pad([]byte("\x89PNG\r\n\x1a\n"), 32))
	f.Add(pad([]byte("RIFF\x00\x00\x00\x00WEBP"), 32))
	f.Add(ftyp("mif1", "heic"))
	f.Add([]byte{0xFF, 0xFF, 0xFF, 0xFF, 'f', 't', 'y', 'p', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add(bmpHeader(40))
	f.Add([]byte("plain text that is long enough to be sniffed"))
	f.Fuzz(func(t *testing.T, head []byte) {
		got, ok := Detect(head)
		if ok != (got != Format{}) {
			t.Fatalf("Detect() = %+v, %v: ok must match a non-zero format", got, ok)
		}
		if ok && len(head) < MinHeaderBytes {
			t.Fatalf("Detect() recognised %d bytes, fewer than MinHeaderBytes", len(head))
		}
		if len(head) > SniffBytes {
			again, okAgain := Detect(head[:SniffBytes])
			if again != got || okAgain != ok {
				t.Fatalf("Detect() depends on bytes past SniffBytes")
			}
		}
	})
}
