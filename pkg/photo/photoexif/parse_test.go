package photoexif

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif/exiftest"
)

const (
	harbourLat = 53.54389
	harbourLon = 9.96611
)

// containers puts one EXIF block into every format the package reads.
func containers(tiff []byte) map[string][]byte {
	return map[string][]byte{
		"jpeg": exiftest.JPEG(tiff, nil, 0),
		"heic": exiftest.HEIC(tiff, 80, 60, 0),
		"webp": exiftest.WebP(tiff, 80, 60, 101),
		"png":  exiftest.PNG(tiff, nil),
		"tiff": tiff,
	}
}

func TestParseEveryFormat(t *testing.T) {
	for _, bigEndian := range []bool{false, true} {
		p := exiftest.Harbour()
		p.BigEndian = bigEndian
		for name, file := range containers(p.Bytes()) {
			t.Run(name, func(t *testing.T) {
				m, err := Parse(file)
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if m.GPS == nil {
					t.Fatalf("no GPS: %v", m.GPSProblem)
				}
				if m.GPSProblem != nil {
					t.Errorf("GPSProblem = %v with a valid position", m.GPSProblem)
				}
				// DMS with seconds to a thousandth: within 1e-6 degrees.
				if math.Abs(m.GPS.Lat-harbourLat) > 1e-6 || math.Abs(m.GPS.Lon-harbourLon) > 1e-6 {
					t.Errorf("position %v, want %v,%v", m.GPS, harbourLat, harbourLon)
				}
				if m.GPS.Altitude == nil || *m.GPS.Altitude != 12.5 {
					t.Errorf("altitude %v, want 12.5", m.GPS.Altitude)
				}
				if m.GPS.Direction == nil || *m.GPS.Direction != 287.25 {
					t.Errorf("direction %v, want 287.25", m.GPS.Direction)
				}
				want := time.Date(2024, 6, 1, 19, 42, 5, 0, time.UTC)
				if m.Captured == nil || !m.Captured.Equal(want) || !m.CapturedZoneKnown {
					t.Fatalf("captured %v (zone known %v), want %v", m.Captured, m.CapturedZoneKnown, want)
				}
				if _, off := m.Captured.Zone(); off != 2*3600 {
					t.Errorf("captured offset %ds, want +02:00", off)
				}
				if m.CameraMake != "Geolocate" || m.CameraModel != "Test Phone 15" {
					t.Errorf("camera %q %q", m.CameraMake, m.CameraModel)
				}
			})
		}
	}
}

func TestParseSouthWestBelowSeaLevel(t *testing.T) {
	alt := -28.0
	p := exiftest.Photo{GPS: &exiftest.GPS{Lat: -33.85678, Lon: -70.64827, Altitude: &alt}}
	m, err := Parse(exiftest.JPEG(p.Bytes(), nil, 0))
	if err != nil || m.GPS == nil {
		t.Fatalf("Parse: %v, %v", err, m.GPSProblem)
	}
	if math.Abs(m.GPS.Lat+33.85678) > 1e-6 || math.Abs(m.GPS.Lon+70.64827) > 1e-6 {
		t.Errorf("position %v", m.GPS)
	}
	if m.GPS.Altitude == nil || *m.GPS.Altitude != -28 {
		t.Errorf("altitude %v, want -28", m.GPS.Altitude)
	}
	if m.GPS.Direction != nil || m.Captured != nil || m.CameraMake != "" {
		t.Errorf("absent fields set: %+v", m)
	}
}

func TestCapturedWithoutOffsetIsWallClockInUTC(t *testing.T) {
	p := exiftest.Photo{Make: "X", DateTimeOriginal: "2023:12:31 23:59:58"}
	m, err := Parse(exiftest.JPEG(p.Bytes(), nil, 0))
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2023, 12, 31, 23, 59, 58, 0, time.UTC)
	if m.Captured == nil || !m.Captured.Equal(want) || m.CapturedZoneKnown {
		t.Fatalf("captured %v zone known %v, want %v and false", m.Captured, m.CapturedZoneKnown, want)
	}
	if m.GPS != nil || m.GPSProblem == nil || m.GPSProblem.Reason != ReasonNoGPS {
		t.Fatalf("GPS %v problem %v, want no_gps", m.GPS, m.GPSProblem)
	}
}

func TestCapturedAt(t *testing.T) {
	tests := []struct {
		dt, sub, off string
		want         string // RFC 3339 with nanoseconds, "" for nil
		zone         bool
	}{
		{"2024:06:01 21:42:05", "", "+02:00", "2024-06-01T21:42:05+02:00", true},
		{"2024:06:01 21:42:05", "25", "-05:30", "2024-06-01T21:42:05.25-05:30", true},
		{"2024:06:01 21:42:05", "", "garbage", "2024-06-01T21:42:05Z", false},
		{"0000:00:00 00:00:00", "", "", "", false},
		{"    :  :     :  :  ", "", "", "", false},
		{"2024:13:45 99:00:00", "", "", "", false},
		{"", "", "+01:00", "", false},
	}
	for _, tt := range tests {
		got, zone := capturedAt(tt.dt, tt.sub, tt.off)
		s := ""
		if got != nil {
			s = got.Format(time.RFC3339Nano)
		}
		if s != tt.want || zone != tt.zone {
			t.Errorf("capturedAt(%q, %q, %q) = %q, %v; want %q, %v", tt.dt, tt.sub, tt.off, s, zone, tt.want, tt.zone)
		}
	}
}

func TestNoEXIF(t *testing.T) {
	files := map[string][]byte{
		"jpeg":        exiftest.JPEG(nil, nil, 0),
		"png":         pngWithout(),
		"webp simple": append([]byte("RIFF\x1a\x00\x00\x00WEBPVP8L\x0e\x00\x00\x00"), make([]byte, 20)...),
	}
	for name, b := range files {
		m, err := Parse(b)
		var p *Problem
		if !errors.As(err, &p) || p.Reason != ReasonNoEXIF {
			t.Errorf("%s: err %v, want no_exif", name, err)
		}
		if m.GPS != nil || m.GPSProblem == nil || m.GPSProblem.Reason != ReasonNoEXIF {
			t.Errorf("%s: GPS %v problem %v", name, m.GPS, m.GPSProblem)
		}
	}
}

func pngWithout() []byte {
	b := exiftest.PNG([]byte("II*\x00\x08\x00\x00\x00\x00\x00\x00\x00\x00\x00"), nil)
	// Rename the eXIf chunk to a private ancillary chunk the walk ignores.
	i := indexOf(b, "eXIf")
	copy(b[i:], "prIv")
	return b
}

func indexOf(b []byte, s string) int {
	for i := 0; i+len(s) <= len(b); i++ {
		if string(b[i:i+len(s)]) == s {
			return i
		}
	}
	return -1
}

func TestUnsupportedFormat(t *testing.T) {
	for name, b := range map[string][]byte{
		"text":  []byte("This is a text file with a .jpg name. It is not an image.\n"),
		"gif":   append([]byte("GIF89a"), make([]byte, 40)...),
		"empty": nil,
	} {
		_, err := Parse(b)
		var p *Problem
		if !errors.As(err, &p) || p.Reason != ReasonUnsupportedFormat {
			t.Errorf("%s: err %v, want unsupported_format", name, err)
		}
	}
}
