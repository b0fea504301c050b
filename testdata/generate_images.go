//go:build ignore

// generate_images writes the sample images in testdata/images. Run from the repository
// root: go run testdata/generate_images.go
//
// The exif-* photos carry real EXIF blocks built by pkg/photo/photoexif/exiftest
// (TIFF IFDs assembled byte by byte, in the containers phones use). The
// photo over the service's 10,000,000-byte limit is not committed: run with
// -large DIR to write it (10.5 MB, deterministic) into DIR; tests build it
// in t.TempDir() with exiftest.WriteLargeJPEG.
package main

import (
	"bytes"
	"flag"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"log"
	"os"
	"path/filepath"

	"github.com/geolocate-aws/geolocate/pkg/photo/photoexif/exiftest"
)

func main() {
	large := flag.String("large", "", "also write the over-the-limit JPEG (exif-gps-large.jpg, 10.5 MB) into this directory")
	flag.Parse()
	dir := filepath.Join("testdata", "images")
	write(filepath.Join(dir, "gradient-64x48.jpg"), encodeJPEG(gradient(64, 48, 0)))
	write(filepath.Join(dir, "gradient-blue-64x48.jpg"), encodeJPEG(gradient(64, 48, 180)))
	write(filepath.Join(dir, "checker-32x32.png"), encodePNG(checker(32, 32)))
	// The object events/sqs-s3-put.json names: a key with spaces.
	write(filepath.Join(dir, "harbour at dusk.jpg"), encodeJPEG(gradient(80, 60, 90)))
	write(filepath.Join(dir, "not-an-image.jpg"), []byte("This is a text file with a .jpg name. It is not an image.\n"))

	// Photos as phones take them: GPS fix, capture time with offset, camera.
	harbour := exiftest.Harbour().Bytes()
	write(filepath.Join(dir, "exif-gps-harbour.jpg"), exiftest.JPEG(harbour, gradient(160, 120, 140), 0))
	// A HEIF container with its Exif item found through iloc. The image item
	// carries no HEVC bitstream: encoding HEVC in pure Go is impractical, so
	// the file exercises the EXIF path only and a decoder would refuse it.
	write(filepath.Join(dir, "exif-gps-harbour.heic"), exiftest.HEIC(harbour, 160, 120, 0))
	// Broken EXIF: the latitude's degrees have a zero denominator, so the
	// photo has a GPS block and no usable position (gps_zero_denominator).
	broken := exiftest.Harbour()
	gps := *broken.GPS
	gps.LatRationals = &[3]exiftest.Rational{{Num: 53, Den: 0}, {Num: 32, Den: 1}, {Num: 38004, Den: 1000}}
	broken.GPS = &gps
	write(filepath.Join(dir, "exif-broken-gps.jpg"), exiftest.JPEG(broken.Bytes(), gradient(160, 120, 60), 0))

	if *large != "" {
		f, err := os.Create(filepath.Join(*large, "exif-gps-large.jpg"))
		if err != nil {
			log.Fatal(err)
		}
		if _, err := exiftest.WriteLargeJPEG(f, exiftest.LargeJPEGBytes, harbour); err != nil {
			log.Fatal(err)
		}
		if err := f.Close(); err != nil {
			log.Fatal(err)
		}
	}
}

func gradient(w, h int, blue uint8) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x * 255 / w), uint8(y * 255 / h), blue, 255})
		}
	}
	return img
}

func checker(w, h int) image.Image {
	img := image.NewGray(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			if (x/4+y/4)%2 == 0 {
				img.SetGray(x, y, color.Gray{Y: 230})
			}
		}
	}
	return img
}

func encodeJPEG(img image.Image) []byte {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 85}); err != nil {
		log.Fatal(err)
	}
	return b.Bytes()
}

func encodePNG(img image.Image) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		log.Fatal(err)
	}
	return b.Bytes()
}

func write(path string, b []byte) {
	if err := os.WriteFile(path, b, 0o644); err != nil {
		log.Fatal(err)
	}
}
