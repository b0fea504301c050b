package photoexif

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSamplePhotos reads the committed sample photos the generator writes
// (go run testdata/generate_images.go), so that a generator change that
// breaks their EXIF fails here.
func TestSamplePhotos(t *testing.T) {
	tests := []struct {
		file string
		gps  Reason // "" for a valid position
	}{
		{"exif-gps-harbour.jpg", ""},
		{"exif-gps-harbour.heic", ""},
		{"exif-broken-gps.jpg", ReasonZeroDenominator},
		{"harbour at dusk.jpg", ReasonNoEXIF},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("..", "..", "..", "testdata", "images", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			m, _ := Parse(b)
			if tt.gps == "" {
				if m.GPS == nil {
					t.Fatalf("no position: %v", m.GPSProblem)
				}
				return
			}
			if m.GPS != nil || m.GPSProblem == nil || m.GPSProblem.Reason != tt.gps {
				t.Fatalf("GPS %v problem %v, want %s", m.GPS, m.GPSProblem, tt.gps)
			}
		})
	}
}
