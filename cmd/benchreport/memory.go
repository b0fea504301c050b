package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
	"github.com/geolocate-aws/geolocate/pkg/photo/downscale"
	"github.com/geolocate-aws/geolocate/pkg/photo/imageformat"
	"github.com/geolocate-aws/geolocate/pkg/photo/phototest"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// rssResult is one run of the predictor binary on one image.
type rssResult struct {
	// Name says what the image is; "" for the typical and 10 MiB ones.
	Name       string
	ImageBytes int
	// Metadata is the run's uploadMetadata: strip (the default) or keep.
	Metadata string
	MaxRSS   int64
	// MaxRSS (wait4) is an upper bound of the predictor's peak RSS, OwnHWM
	// (its polled VmHWM) a lower bound: see rsschild.go.
	OwnHWM int64
	Wall   time.Duration
	CPU    time.Duration
	// Status and Reason are the object's final record; Estimate is the
	// downscale's estimated peak (0 when it is not downscaled).
	Status, Reason string
	Estimate       int64
}

// childEnv is the environment of the predictor binary: the stack's
// variables, local endpoints, fake credentials, and nothing inherited (no
// real AWS profile can leak in).
func childEnv(e *localEnv, st stack) []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.TempDir(),
		"AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=AKIDBENCHFAKE",
		"AWS_SECRET_ACCESS_KEY=bench-fake-secret",
		"AWS_CONFIG_FILE=/dev/null",
		"AWS_SHARED_CREDENTIALS_FILE=/dev/null",
		"AWS_EC2_METADATA_DISABLED=true",
		"AWS_ENDPOINT_URL_S3=" + e.s3srv.Endpoint(),
		"AWS_ENDPOINT_URL_DYNAMODB=" + e.ddbsrv.Endpoint(),
	}
	for k, v := range functionEnv(st, e.simURL, unpacedRate, 1) {
		env = append(env, k+"="+v)
	}
	// What Lambda and the stack set besides: the function's memory, and
	// GOMEMLIMIT at 90% of it (infra/functions.go, goMemLimit).
	return append(env, envvars.FunctionMemorySize+"="+strconv.Itoa(st.MemoryMB),
		"GOMEMLIMIT="+strconv.Itoa(st.MemoryMB*9/10)+"MiB")
}

// measureRSS runs `predictor -event FILE` on one image of size bytes and
// reads the child's peak resident set size.
func measureRSS(ctx context.Context, e *localEnv, st stack, bin, tmp string, size int, name, metadata string) (*rssResult, error) {
	return measureRSSOf(ctx, e, st, bin, tmp, "memory/"+name+".jpg", fakeJPEG(size, uint64(size)), ledger.StatusSucceeded, metadata)
}

// measureRSSOf runs `predictor -event FILE` on body, stored under key, with
// the given uploadMetadata, and reads the child's peak resident set size;
// the object's record must end in wantStatus.
func measureRSSOf(ctx context.Context, e *localEnv, st stack, bin, tmp, key string, body []byte, wantStatus, metadata string) (*rssResult, error) {
	size := len(body)
	name := strings.NewReplacer("/", "-", ".", "-").Replace(key)
	obj, err := e.put(ctx, key, body)
	if err != nil {
		return nil, err
	}
	payload, _, err := sqsEvent(ctx, sqsqueue.New(), obj)
	if err != nil {
		return nil, err
	}
	eventFile := filepath.Join(tmp, "event-"+name+".json")
	if err := os.WriteFile(eventFile, payload, 0o600); err != nil {
		return nil, err
	}
	var stdout, stderr bytes.Buffer
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, self, rssLauncherArg, bin, "-event", eventFile, "-timeout", st.Timeout.String())
	cmd.Env = append(childEnv(e, st), envvars.UploadMetadata+"="+metadata)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("predictor -event on %d bytes: %w\n%s", size, err, tail(stderr.Bytes()))
	}
	maxRSS, hwm, wall, cpu, err := launcherFigures(stderr.String())
	if err != nil {
		return nil, err
	}
	if f, err := batchFailures(bytes.TrimSpace(stdout.Bytes())); err != nil || len(f) != 0 {
		return nil, fmt.Errorf("predictor -event on %d bytes: failures %v %v\n%s", size, f, err, tail(stderr.Bytes()))
	}
	rec, err := e.store.Lookup(ctx, refOf(obj))
	if err != nil || rec == nil || rec.Status != wantStatus {
		return nil, fmt.Errorf("record of the %d byte image %s, want %s: %+v %v", size, key, wantStatus, rec, err)
	}
	// A downscaled photo is re-encoded without any metadata: its record
	// says nothing of the upload's metadata.
	if wantStatus == ledger.StatusSucceeded && !rec.Downscaled && rec.UploadMetadata != metadata {
		return nil, fmt.Errorf("record of the %d byte image says upload_metadata %q, want %q", size, rec.UploadMetadata, metadata)
	}
	return &rssResult{ImageBytes: size, Metadata: metadata, MaxRSS: maxRSS, OwnHWM: hwm, Wall: wall, CPU: cpu,
		Status: rec.Status, Reason: rec.ErrorCode}, nil
}

// measureMemory runs the binary on a typical image and on one of the
// service's maximum size, both stripped of their metadata on the way (the
// default), then on the maximum size sent as stored (uploadMetadata=keep):
// stripping must keep the stream flat. Then on the hostile photos
// (measureHostile).
func measureMemory(ctx context.Context, e *localEnv, st stack, bin, tmp string) ([]rssResult, error) {
	var out []rssResult
	for _, c := range []struct {
		name     string
		size     int
		metadata string
	}{
		{"typical", 300 << 10, predictor.UploadMetadataStrip},
		{"max", int(imageformat.DefaultMaxImageBytes), predictor.UploadMetadataStrip},
		{"max-keep", int(imageformat.DefaultMaxImageBytes), predictor.UploadMetadataKeep},
	} {
		r, err := measureRSS(ctx, e, st, bin, tmp, c.size, c.name, c.metadata)
		if err != nil {
			return nil, err
		}
		out = append(out, *r)
	}
	hostile, err := measureHostile(ctx, e, st, bin, tmp)
	return append(out, hostile...), err
}

// tail keeps the end of a process's output for an error message.
func tail(b []byte) string {
	const n = 2000
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// hostilePhoto is one of the worst photos for memory, made at bench time
// (nothing big is committed).
type hostilePhoto struct {
	name, key  string
	side       int // square: side x side pixels
	wantStatus string
	make       func(side int) ([]byte, error)
	// header is the start of such a photo of side x side, for the search
	// of the largest one the budget lets through.
	header func(side int) []byte
}

// hostilePhotos are issue 23's worst inputs: at 100 MP, refused from the
// header on the stack's memory, and the largest of each kind that the
// budget lets through, which must then stay under 80% of that memory.
func hostilePhotos() []hostilePhoto {
	progressive444 := func(side int) ([]byte, error) {
		b, err := phototest.JPEG(side, side, 20, 1, "-sample", "1x1", "-quality", "90")
		if err != nil {
			return nil, err
		}
		return phototest.Progressive(b)
	}
	png16 := func(interlaced bool, depth int) func(side int) ([]byte, error) {
		return func(side int) ([]byte, error) {
			var b bytes.Buffer
			err := phototest.PNG(&b, side, side, depth, phototest.RGBA, interlaced, 3, 1)
			return b.Bytes(), err
		}
	}
	cmyk := func(side int) ([]byte, error) { return phototest.CMYK(side, side, 20, 1) }
	jpegHeader := func(progressive bool, hv ...byte) func(int) []byte {
		return func(side int) []byte { return phototest.JPEGHeader(progressive, side, side, hv...) }
	}
	pngHeader := func(depth int, interlaced bool) func(int) []byte {
		return func(side int) []byte { return phototest.PNGHeader(side, side, depth, phototest.RGBA, interlaced) }
	}
	return []hostilePhoto{
		{name: "100 MP progressive 4:4:4 JPEG", key: "hostile/progressive-100mp.jpg", side: 10_000,
			wantStatus: ledger.StatusRejected, make: progressive444},
		{name: "largest progressive 4:4:4 JPEG let through", key: "hostile/progressive-max.jpg",
			wantStatus: ledger.StatusSucceeded, make: progressive444, header: jpegHeader(true, 0x11, 0x11, 0x11)},
		{name: "100 MP 16-bit RGBA PNG", key: "hostile/png16-100mp.png", side: 10_000,
			wantStatus: ledger.StatusRejected, make: png16(false, 16)},
		{name: "largest 16-bit RGBA PNG let through", key: "hostile/png16-max.png",
			wantStatus: ledger.StatusSucceeded, make: png16(false, 16), header: pngHeader(16, false)},
		{name: "largest CMYK JPEG let through", key: "hostile/cmyk-max.jpg",
			wantStatus: ledger.StatusSucceeded, make: cmyk, header: jpegHeader(false, 0x11, 0x11, 0x11, 0x11)},
		{name: "largest interlaced 8-bit RGBA PNG let through", key: "hostile/interlaced-max.png",
			wantStatus: ledger.StatusSucceeded, make: png16(true, 8), header: pngHeader(8, true)},
	}
}

// largestAdmitted is the largest square side (to 16 px) whose header the
// predictor's downscale budget lets through, at most 10,000 (100 MP).
func largestAdmitted(header func(int) []byte, opts downscale.Options) int {
	lo, hi := 512, 10_000
	for hi-lo > 16 {
		mid := (lo + hi) / 2
		if _, _, err := downscale.Estimate(header(mid), opts); err == nil {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// measureHostile runs the predictor on each hostile photo, one at a time,
// at the stack's memory, and checks each ends in its final record.
func measureHostile(ctx context.Context, e *localEnv, st stack, bin, tmp string) ([]rssResult, error) {
	cfg := predictor.Config{MemoryMB: st.MemoryMB, MaxImageBytes: imageformat.DefaultMaxImageBytes,
		DownscaleMaxSide: predictor.DefaultDownscaleMaxSide}
	opts := cfg.DownscaleOptions()
	var out []rssResult
	for _, h := range hostilePhotos() {
		side := h.side
		if h.header != nil {
			side = largestAdmitted(h.header, opts)
		}
		progress("memory: making the %s (%d x %d)", h.name, side, side)
		body, err := h.make(side)
		if err != nil {
			return nil, fmt.Errorf("make the %s: %w", h.name, err)
		}
		if int64(len(body)) <= imageformat.DefaultMaxImageBytes {
			return nil, fmt.Errorf("the %s is %d bytes: not over the limit, so not downscaled", h.name, len(body))
		}
		c, _, estErr := downscale.Estimate(body, opts)
		r, err := measureRSSOf(ctx, e, st, bin, tmp, h.key, body, h.wantStatus, predictor.UploadMetadataStrip)
		if err != nil {
			return nil, fmt.Errorf("%s: %w (estimate: %v)", h.name, err, estErr)
		}
		r.Name = fmt.Sprintf("%s, %d x %d", h.name, side, side)
		r.Estimate = c.Peak
		progress("memory: %s: %s %s, peak RSS %.0f MB (estimated downscale peak %.0f MB)", r.Name, r.Status, r.Reason, mb(float64(r.MaxRSS)), mb(float64(c.Peak)))
		out = append(out, *r)
	}
	return out, nil
}
