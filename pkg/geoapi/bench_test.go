package geoapi

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"
)

// drainServer reads and discards each upload, then answers a prediction.
func drainServer(tb testing.TB) *httptest.Server {
	tb.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		writeBody(w, http.StatusOK, coordinatesBody)
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// heapPeak samples HeapInuse while fn runs and returns the largest growth
// over the level measured (after a GC) before it started.
func heapPeak(fn func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var s runtime.MemStats
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&s)
			if s.HeapInuse > base && s.HeapInuse-base > peak {
				peak = s.HeapInuse - base
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	fn()
	close(stop)
	wg.Wait()
	return peak
}

func BenchmarkPredict10MB(b *testing.B) {
	img := fakeJPEG(maxImage)
	srv := drainServer(b)
	c, err := New(srv.URL, func(o *Options) { o.APIKey = testKey })
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(img)))
	b.ReportAllocs()
	b.ResetTimer()
	peak := heapPeak(func() {
		for range b.N {
			if _, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(img)}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
}

func BenchmarkBareMultipartPOST10MB(b *testing.B) {
	img := fakeJPEG(maxImage)
	srv := drainServer(b)
	b.SetBytes(int64(len(img)))
	b.ReportAllocs()
	b.ResetTimer()
	peak := heapPeak(func() {
		for range b.N {
			var buf bytes.Buffer
			mw := multipart.NewWriter(&buf)
			fw, err := mw.CreateFormFile("file", "image.jpg")
			if err != nil {
				b.Fatal(err)
			}
			_, _ = fw.Write(img)
			_ = mw.Close()
			req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/prediction/predict", &buf)
			if err != nil {
				b.Fatal(err)
			}
			req.Header.Set("Content-Type", mw.FormDataContentType())
			req.Header.Set(KeyHeader, testKey)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
}

// TestPredictDoesNotCopyTheImage checks the streaming promise: uploading a
// 10 MiB image allocates a small fraction of its size, from a byte slice
// and from a file alike.
func TestPredictDoesNotCopyTheImage(t *testing.T) {
	if testing.Short() {
		t.Skip("uploads 10 MiB twice")
	}
	img := fakeJPEG(maxImage)
	path := filepath.Join(t.TempDir(), "big.jpg")
	if err := os.WriteFile(path, img, 0o600); err != nil {
		t.Fatal(err)
	}
	srv := drainServer(t)
	c, err := New(srv.URL, func(o *Options) { o.APIKey = testKey })
	if err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string]ImageSource{"bytes": BytesSource(img), "file": FileSource(path)} {
		// Warm up the connection pool so only the upload itself is measured.
		if _, err := c.Predict(context.Background(), &PredictInput{Image: BytesSource(fakeJPEG(100))}); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if _, err := c.Predict(context.Background(), &PredictInput{Image: src}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		runtime.ReadMemStats(&after)
		allocated := after.TotalAlloc - before.TotalAlloc
		if allocated > uint64(maxImage/8) {
			t.Errorf("%s: allocated %d bytes for a %d byte upload; the image must be streamed, not copied",
				name, allocated, len(img))
		}
	}
}
