package downscale

import (
	"errors"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/photo/imageformat"
)

func TestCheckHeader(t *testing.T) {
	jpg := encodeJPEG(t, noisyYCbCr(64, 48, 10), 90)
	tests := []struct {
		name         string
		head         []byte
		wantOK       bool
		wantW, wantH int
		wantRefused  bool
	}{
		{"jpeg within the limit", jpg, true, 64, 48, false},
		{"png declaring 100,000 x 100,000", pngWithIHDR(100_000, 100_000), true, 100_000, 100_000, true},
		{"jpeg declaring 65,535 x 65,535", jpegWithSize(t, jpg, 65535, 65535), true, 65535, 65535, true},
		// image/png refuses a zero side in DecodeConfig: an unreadable
		// header, left to the caller (Downscale refuses it as corrupt).
		{"png declaring an empty side", pngWithIHDR(0, 10), false, 0, 0, false},
		// The head ends before the SOF marker: nothing can be said.
		{"jpeg head cut before its dimensions", jpg[:4], false, 0, 0, false},
		{"not an image", []byte("plain text, no image here at all"), false, 0, 0, false},
		{"heic is not checked here", []byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic"), false, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ok, err := CheckHeader(tt.head, 0)
			if ok != tt.wantOK || d.Width != tt.wantW || d.Height != tt.wantH {
				t.Errorf("ok %v %dx%d, want %v %dx%d", ok, d.Width, d.Height, tt.wantOK, tt.wantW, tt.wantH)
			}
			var dims *DimensionsError
			if refused := errors.As(err, &dims); refused != tt.wantRefused {
				t.Errorf("err %v, want refused %v", err, tt.wantRefused)
			}
		})
	}
	if d, _, _ := CheckHeader(jpg, 0); d.Format != imageformat.JPEG {
		t.Errorf("format %v, want JPEG", d.Format)
	}
	// The limit is the caller's: 64 x 48 = 3,072 pixels is over 3,000.
	if _, _, err := CheckHeader(jpg, 3000); err == nil {
		t.Error("a 3,072-pixel JPEG passed a 3,000-pixel limit")
	}
}
