package photoexif

import (
	"errors"
	"math"
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif/exiftest"
)

// FuzzParse: no input panics, every failure is a *Problem with a known
// reason, and a returned position always passes CheckPosition.
func FuzzParse(f *testing.F) {
	harbour := exiftest.Harbour().Bytes()
	for _, b := range containers(harbour) {
		f.Add(b)
	}
	be := exiftest.Harbour()
	be.BigEndian = true
	f.Add(exiftest.HEIC(be.Bytes(), 80, 60, 0))
	f.Add(exiftest.PNGBomb(harbour, 100_000, 100_000))
	f.Add(harbour[:40])
	f.Add(exiftest.JPEG(harbour, nil, 0)[:200])
	f.Add(exiftest.JPEG([]byte("II*\x00\x00\xff\xff\xff\x00\x00"), nil, 0))
	f.Add(exiftest.JPEG(append([]byte("II*\x00\x08\x00\x00\x00\xff\xff"), make([]byte, 64)...), nil, 0))
	f.Add(withGPS(func(g *exiftest.GPS) { g.LatRationals = rationals(53, 0, 32, 1, 38, 1) }))
	f.Add(withGPS(func(g *exiftest.GPS) { g.Status = "V" }))
	f.Add(withTIFF(func(t *exiftest.TIFF) {
		t.IFD1 = []exiftest.Field{exiftest.Long(exiftest.TagThumbnailOffset, 8), exiftest.Long(exiftest.TagThumbnailLength, 0xf000_0000)}
	}))
	known := map[Reason]bool{}
	for _, r := range []Reason{ReasonUnsupportedFormat, ReasonNoEXIF, ReasonBeyondHead, ReasonTruncated,
		ReasonOffsetOutside, ReasonIFDCount, ReasonMalformed, ReasonNoGPS, ReasonNoFix, ReasonStatusVoid,
		ReasonNullIsland, ReasonOutOfRange, ReasonZeroDenominator, ReasonNotFinite, ReasonGPSMalformed} {
		known[r] = true
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, size := range []int64{int64(len(b)), -1} {
			m, err := ParseHead(b, size)
			if err != nil {
				var p *Problem
				if !errors.As(err, &p) || !known[p.Reason] {
					t.Fatalf("error %v is not a known Problem", err)
				}
			}
			if m.GPS != nil {
				if err != nil || m.GPSProblem != nil {
					t.Fatalf("position %v with error %v / problem %v", m.GPS, err, m.GPSProblem)
				}
				if p := CheckPosition(m.GPS.Lat, m.GPS.Lon); p != nil {
					t.Fatalf("invalid position returned: %v", p)
				}
			} else if m.GPSProblem == nil || !known[m.GPSProblem.Reason] {
				t.Fatalf("no position and no known reason: %v", m.GPSProblem)
			}
		}
	})
}

func TestCheckPosition(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, tt := range []struct {
		lat, lon float64
		want     Reason
	}{
		{53.5, 9.9, ""},
		{-90, 180, ""},
		{0, 0.0001, ""},
		{0, 0, ReasonNullIsland},
		{nan, 1, ReasonNotFinite},
		{1, inf, ReasonNotFinite},
		{90.0001, 0, ReasonOutOfRange},
		{0, -180.5, ReasonOutOfRange},
	} {
		p := CheckPosition(tt.lat, tt.lon)
		if (p == nil) != (tt.want == "") || (p != nil && p.Reason != tt.want) {
			t.Errorf("CheckPosition(%v, %v) = %v, want %q", tt.lat, tt.lon, p, tt.want)
		}
	}
}
