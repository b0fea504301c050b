//go:build ignore

// generate_images writes the sample images in testdata/images. Run from the repository
// root: go run testdata/generate_images.go
package main

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"log"
	"os"
	"path/filepath"
)

func main() {
	dir := filepath.Join("testdata", "images")
	write(filepath.Join(dir, "gradient-64x48.jpg"), encodeJPEG(gradient(64, 48, 0)))
	write(filepath.Join(dir, "gradient-blue-64x48.jpg"), encodeJPEG(gradient(64, 48, 180)))
	write(filepath.Join(dir, "checker-32x32.png"), encodePNG(checker(32, 32)))
	// The object events/sqs-s3-put.json names: a key with spaces.
	write(filepath.Join(dir, "harbour at dusk.jpg"), encodeJPEG(gradient(80, 60, 90)))
	write(filepath.Join(dir, "not-an-image.jpg"), []byte("This is a text file with a .jpg name. It is not an image.\n"))
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
