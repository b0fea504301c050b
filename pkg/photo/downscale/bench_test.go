package downscale

import (
	"bytes"
	"context"
	"image"
	"image/jpeg"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"golang.org/x/image/draw"
)

// The 50 MP benchmark photo: 8660 x 5773 (a 3:2 50 MP sensor), content
// tuned to about 20 MB at quality 90, like a detailed camera JPEG. Building
// it takes seconds, so it is made once per test binary and shared.
var (
	photo50MPOnce sync.Once
	photo50MP     []byte
)

func jpeg50MP(b *testing.B) []byte {
	photo50MPOnce.Do(func() {
		photo50MP = encodeJPEG(b, noisyYCbCr(8660, 5773, 16), 90)
	})
	return photo50MP
}

// peakSampler polls the Go runtime's memory figures every millisecond while
// a benchmark runs and keeps the maxima above the baseline at start:
//   - heap: bytes in heap objects, live or not yet swept (the heap the
//     garbage collector lets grow to its goal);
//   - mapped: memory the runtime holds from the OS minus what it has
//     returned, the Go-side approximation of RSS.
type peakSampler struct {
	stop                 chan struct{}
	done                 sync.WaitGroup
	baseHeap, baseMapped uint64
	peakHeap, peakMapped uint64
	samples              []metrics.Sample
}

func startPeakSampler() *peakSampler {
	runtime.GC()
	p := &peakSampler{stop: make(chan struct{}), samples: []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
	}}
	p.baseHeap, p.baseMapped = p.read()
	p.peakHeap, p.peakMapped = p.baseHeap, p.baseMapped
	p.done.Add(1)
	go func() {
		defer p.done.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			p.sample()
			select {
			case <-p.stop:
				return
			case <-t.C:
			}
		}
	}()
	return p
}

func (p *peakSampler) read() (heap, mapped uint64) {
	metrics.Read(p.samples)
	return p.samples[0].Value.Uint64(), p.samples[1].Value.Uint64() - p.samples[2].Value.Uint64()
}

func (p *peakSampler) sample() {
	h, m := p.read()
	p.peakHeap, p.peakMapped = max(p.peakHeap, h), max(p.peakMapped, m)
}

// report stops sampling and reports the peaks above the baseline in MB.
func (p *peakSampler) report(b *testing.B) {
	close(p.stop)
	p.done.Wait()
	p.sample()
	b.ReportMetric(float64(p.peakHeap-p.baseHeap)/1e6, "peak-heap-MB")
	b.ReportMetric(float64(p.peakMapped-p.baseMapped)/1e6, "peak-mapped-MB")
}

// BenchmarkDownscale50MP runs the whole downscale path on a 50 MP, ~20 MB
// JPEG: stream in, decode, resize to 4096 px, encode under 10 MB. The input
// bytes are the baseline (in production they stream from S3), so the
// peak-* metrics are what the path itself adds.
func BenchmarkDownscale50MP(b *testing.B) {
	src := jpeg50MP(b)
	b.Logf("input: %d bytes, 8660 x 5773", len(src))
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	p := startPeakSampler()
	var res Result
	for b.Loop() {
		var err error
		if res, err = Downscale(context.Background(), bytes.NewReader(src), Options{}); err != nil {
			b.Fatal(err)
		}
	}
	p.report(b)
	b.Logf("output: %d bytes, %d x %d, quality %d", res.Bytes, res.Width, res.Height, res.Quality)
}

// BenchmarkResize50MP compares ways to take the decoded 50 MP photo (YCbCr
// 4:2:0, as image/jpeg returns it) to 4096 x 2731: the banded Catmull-Rom
// resize this package uses, one draw.CatmullRom.Scale call, and
// draw.ApproxBiLinear. The figures behind the choice in resize.go.
func BenchmarkResize50MP(b *testing.B) {
	img, err := jpeg.Decode(bytes.NewReader(jpeg50MP(b)))
	if err != nil {
		b.Fatal(err)
	}
	const dw, dh = 4096, 2731
	for _, bc := range []struct {
		name string
		fn   func(image.Image) *image.RGBA
	}{
		{"banded-CatmullRom", func(src image.Image) *image.RGBA { r, _ := resize(context.Background(), src, dw, dh); return r }},
		{"one-call-CatmullRom", func(src image.Image) *image.RGBA {
			dst := image.NewRGBA(image.Rect(0, 0, dw, dh))
			draw.CatmullRom.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Src, nil)
			return dst
		}},
		{"ApproxBiLinear", func(src image.Image) *image.RGBA {
			dst := image.NewRGBA(image.Rect(0, 0, dw, dh))
			draw.ApproxBiLinear.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Src, nil)
			return dst
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			p := startPeakSampler()
			for b.Loop() {
				bc.fn(img)
			}
			p.report(b)
		})
	}
}
