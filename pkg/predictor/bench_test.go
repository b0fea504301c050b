package predictor

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/photo/imageformat"
)

// BenchmarkHandler measures the handler's own cost per image against the
// local parts (gofakes3, DynamoDB Local) and the simulator at zero latency:
// one SQS message per iteration, each a new object holding a new photo
// (with reuseResults=content, the default, a copy would be reused rather
// than paid for: BenchmarkHandlerReused). The service's round
// trip is reported apart ("service-ms/op") and subtracted from the total
// ("overhead-ms/op": ledger reads and writes, S3 reads, decoding, logs).
// The handler's S3 and DynamoDB requests per image are reported too
// ("s3-req/op", "ddb-req/op").
func BenchmarkHandler(b *testing.B) {
	e := newTestEnv(b, nil)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		u := e.put(fmt.Sprintf("bench/%d.jpg", i), testJPEG(b, i+1))
		batch := sqsBatch(uploadMessage("m", u))
		b.StartTimer()
		if failed := e.invokeSQS(batch); len(failed) != 0 {
			b.Fatalf("failures %v", failed)
		}
	}
	b.StopTimer()
	serviceMS := e.metricSum(metricServiceLatency)
	total := float64(b.Elapsed().Microseconds()) / 1000
	b.ReportMetric(serviceMS/float64(b.N), "service-ms/op")
	b.ReportMetric((total-serviceMS)/float64(b.N), "overhead-ms/op")
	b.ReportMetric(float64(e.requests.total("s3"))/float64(b.N), "s3-req/op")
	b.ReportMetric(float64(e.requests.total("dynamodb"))/float64(b.N), "ddb-req/op")
}

// BenchmarkHandler10MBPeakHeap measures the heap growth while one 10 MiB
// image (the service's limit) goes through the handler. The service is a
// stand-in that drains the upload without keeping it, so the figure is the
// function's own (plus the in-process S3 server's GET path): the image is
// streamed from S3 to the service, never held whole.
func BenchmarkHandler10MBPeakHeap(b *testing.B) {
	e := newTestEnv(b, nil)
	drain := httptest.NewServer(http.HandlerFunc(drainingService))
	b.Cleanup(drain.Close)
	e.cfg.APIURL = drain.URL
	e.h = e.newHandler(e.cfg)

	img := make([]byte, imageformat.DefaultMaxImageBytes)
	_, _ = rand.Read(img)
	copy(img, []byte{0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10, 'J', 'F', 'I', 'F', 0x00})

	var peak float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		// A new photo each time: a copy would be reused, not uploaded.
		binary.BigEndian.PutUint64(img[len(img)-8:], uint64(i))
		u := e.put(fmt.Sprintf("big/%d.jpg", i), img)
		batch := sqsBatch(uploadMessage("m", u))
		runtime.GC()
		b.StartTimer()
		growth := peakHeapGrowth(func() {
			if failed := e.invokeSQS(batch); len(failed) != 0 {
				b.Fatalf("failures %v", failed)
			}
		})
		peak = max(peak, float64(growth)/(1<<20))
	}
	b.ReportMetric(peak, "peak-heap-MB")
}

// peakHeapGrowth runs fn while sampling the in-use heap, and returns the
// highest value seen above the level before fn.
func peakHeapGrowth(fn func()) uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var s runtime.MemStats
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&s)
			if s.HeapInuse > peak.Load() {
				peak.Store(s.HeapInuse)
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
	if p := peak.Load(); p > base {
		return p - base
	}
	return 0
}

// drainingService answers every prediction with a fixed success after
// reading (and discarding) the upload.
func drainingService(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"message_code":"success","data":{"prediction":{"result_type":"coordinates",`+
		`"clusters":[{"center":{"latitude":48.8566,"longitude":2.3522},"location":{"name":"Paris","admin1":"Ile-de-France","country_code":"FR"},"radius_km":12.5}],`+
		`"processing_time_ms":5},"prediction_id":"6f1c2a4e-8b3d-4f7a-9c1e-2d5b7a9e0f13","model_id":"geo-global-v2","credits_consumed":1}}`)
}

// BenchmarkHandlerReused is BenchmarkHandler for copies: every iteration
// uploads the same photo under a new key, so after the first each is
// recorded from the first one's answer without a call.
func BenchmarkHandlerReused(b *testing.B) {
	e := newTestEnv(b, nil)
	img := testJPEG(b, 1)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		u := e.put(fmt.Sprintf("copies/%d.jpg", i), img)
		batch := sqsBatch(uploadMessage("m", u))
		b.StartTimer()
		if failed := e.invokeSQS(batch); len(failed) != 0 {
			b.Fatalf("failures %v", failed)
		}
	}
	b.StopTimer()
	if n := e.sim.CallCount(); n != 1 {
		b.Fatalf("%d calls for %d copies, want 1", n, b.N)
	}
	b.ReportMetric(float64(e.requests.total("s3"))/float64(b.N), "s3-req/op")
	b.ReportMetric(float64(e.requests.total("dynamodb"))/float64(b.N), "ddb-req/op")
}
