package photoexif

import (
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif/exiftest"
)

// The amplification cases of issue 23: a block whose GPS entries are
// RATIONAL arrays spanning the whole block. Decoding every entry in full
// cost 48 s and 10.5 GB for the PNG, 1.8 s and 682 MB for the JPEG.
// With entries <= 0 the GPS IFD holds as many entries as fit (about
// 21,000 in the PNG, 5,400 in the JPEG); maxIFDEntries makes it the
// largest IFD that is walked rather than refused for its count.
func amplifyingPNG(entries int) []byte {
	// 250 KiB in all: the eXIf chunk plus a 16x16 PNG around it.
	return exiftest.PNG(exiftest.AmplifyingGPS(250<<10-200, entries), nil)
}

func amplifyingJPEG(entries int) []byte {
	// The largest block one APP1 segment holds (64 KiB less its header).
	return exiftest.JPEG(exiftest.AmplifyingGPS(0xFFFF-8, entries), nil, 0)
}

// TestAmplificationBounded: a head built to amplify parses with a
// reason and allocates at most a small multiple of its size. Allocation,
// not time, is asserted: the work is proportional to what is allocated
// here, and timed tests flake on a shared machine (BenchmarkParseHostile
// gives the times).
func TestAmplificationBounded(t *testing.T) {
	for _, tc := range []struct {
		name string
		file []byte
	}{
		{"png with a 250 KiB eXIf", amplifyingPNG(0)},
		{"jpeg with a 64 KiB APP1", amplifyingJPEG(0)},
		{"png with a 250 KiB eXIf, largest IFD walked", amplifyingPNG(maxIFDEntries)},
		{"jpeg with a 64 KiB APP1, largest IFD walked", amplifyingJPEG(maxIFDEntries)},
		{"tiff of 256 KiB", exiftest.AmplifyingGPS(DefaultCaptureLimit, 0)},
		{"tiff of 256 KiB, largest IFD walked", exiftest.AmplifyingGPS(DefaultCaptureLimit, maxIFDEntries)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.file) > DefaultCaptureLimit {
				t.Fatalf("%d bytes: larger than a head", len(tc.file))
			}
			var m Meta
			var err error
			n := allocated(func() { m, err = ParseHead(tc.file, int64(len(tc.file))) })
			if m.GPS != nil || m.GPSProblem == nil {
				t.Errorf("GPS %v problem %v: want no position and a reason", m.GPS, m.GPSProblem)
			}
			if err == nil && m.GPSProblem.Reason != ReasonGPSMalformed && m.GPSProblem.Reason != ReasonIFDCount {
				t.Errorf("problem %v", m.GPSProblem)
			}
			if limit := uint64(4 * len(tc.file)); n > limit {
				t.Errorf("allocated %d bytes for a %d-byte head (limit %d)", n, len(tc.file), limit)
			}
		})
	}
}

// BenchmarkParseHostile parses the amplification cases: the before/after
// figures of issue 23 point 2 (see docs/reliability.md).
func BenchmarkParseHostile(b *testing.B) {
	for _, bc := range []struct {
		name string
		file []byte
	}{
		{"png-250KiB-eXIf", amplifyingPNG(0)},
		{"jpeg-64KiB-APP1", amplifyingJPEG(0)},
		{"png-250KiB-eXIf-1024-entries", amplifyingPNG(maxIFDEntries)},
		{"jpeg-64KiB-APP1-1024-entries", amplifyingJPEG(maxIFDEntries)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.file)))
			b.ReportAllocs()
			for b.Loop() {
				_, _ = ParseHead(bc.file, int64(len(bc.file)))
			}
		})
	}
}
