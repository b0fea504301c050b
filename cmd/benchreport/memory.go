package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/ledger"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
	"github.com/geolocate-aws/geolocate/pkg/photo/imageformat"
	"github.com/geolocate-aws/geolocate/pkg/predictor"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// rssResult is one run of the predictor binary on one image.
type rssResult struct {
	ImageBytes int
	// Metadata is the run's uploadMetadata: strip (the default) or keep.
	Metadata string
	MaxRSS   int64
	// MaxRSS (wait4) is an upper bound of the predictor's peak RSS, OwnHWM
	// (its polled VmHWM) a lower bound: see rsschild.go.
	OwnHWM int64
	Wall   time.Duration
	CPU    time.Duration
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
	for k, v := range functionEnv(st, e.simURL, 1e6, 1) {
		env = append(env, k+"="+v)
	}
	return env
}

// measureRSS runs `predictor -event FILE` on one image of size bytes and
// reads the child's peak resident set size.
func measureRSS(ctx context.Context, e *localEnv, st stack, bin, tmp string, size int, name, metadata string) (*rssResult, error) {
	obj, err := e.put(ctx, "memory/"+name+".jpg", fakeJPEG(size, uint64(size)))
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
	if err != nil || rec == nil || rec.Status != ledger.StatusSucceeded {
		return nil, fmt.Errorf("record of the %d byte image: %+v %v", size, rec, err)
	}
	if rec.UploadMetadata != metadata {
		return nil, fmt.Errorf("record of the %d byte image says upload_metadata %q, want %q", size, rec.UploadMetadata, metadata)
	}
	return &rssResult{ImageBytes: size, Metadata: metadata, MaxRSS: maxRSS, OwnHWM: hwm, Wall: wall, CPU: cpu}, nil
}

// measureMemory runs the binary on a typical image and on one of the
// service's maximum size, both stripped of their metadata on the way (the
// default), then on the maximum size sent as stored (uploadMetadata=keep):
// stripping must keep the stream flat.
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
	return out, nil
}

// tail keeps the end of a process's output for an error message.
func tail(b []byte) string {
	const n = 2000
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
