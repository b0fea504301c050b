package main

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/bench"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
)

// coldStartResult is the time from exec to the first poll of the Runtime
// API (init done: ready for the first event) and to the first answer.
type coldStartResult struct {
	Starts        int
	Ready         bench.Stats
	FirstResponse bench.Stats
}

// measureColdStarts starts the host-built predictor n times under a fake
// Runtime API and times each start. Each start gets a new image, so the
// first invocation does the full work (S3, claim, call, record).
func measureColdStarts(ctx context.Context, e *localEnv, st stack, bin string, n int) (*coldStartResult, error) {
	var ready, first []time.Duration
	for i := range n {
		r, f, err := coldStart(ctx, e, st, bin, i)
		if err != nil {
			return nil, err
		}
		ready, first = append(ready, r), append(first, f)
	}
	return &coldStartResult{Starts: n, Ready: bench.Summarize(ready), FirstResponse: bench.Summarize(first)}, nil
}

func coldStart(ctx context.Context, e *localEnv, st stack, bin string, i int) (ready, first time.Duration, err error) {
	obj, err := e.put(ctx, fmt.Sprintf("cold/%02d.jpg", i), fakeJPEG(300<<10, uint64(1000+i)))
	if err != nil {
		return 0, 0, err
	}
	payload, _, err := sqsEvent(ctx, sqsqueue.New(), obj)
	if err != nil {
		return 0, 0, err
	}
	api, err := bench.StartRuntimeAPI(payload, st.Timeout)
	if err != nil {
		return 0, 0, err
	}
	defer api.Close()

	var stderr bytes.Buffer
	cmd := exec.Command(bin)
	cmd.Env = append(childEnv(e, st),
		"AWS_LAMBDA_RUNTIME_API="+api.Addr(),
		"AWS_LAMBDA_FUNCTION_NAME=predictor",
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE="+strconv.Itoa(st.MemoryMB),
		"AWS_LAMBDA_LOG_GROUP_NAME=/aws/lambda/predictor",
		"AWS_LAMBDA_LOG_STREAM_NAME=bench",
	)
	cmd.Stderr = &stderr // stdout (metrics under Lambda) is discarded
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, fmt.Errorf("start predictor: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		// Only this child, by its own handle; it is stuck in its second
		// poll by now.
		_ = cmd.Process.Kill()
		<-exited
	}()

	timeout := time.NewTimer(time.Minute)
	defer timeout.Stop()
	select {
	case at := <-api.FirstPoll():
		ready = at.Sub(start)
	case err := <-exited:
		exited <- err
		return 0, 0, fmt.Errorf("predictor exited before polling: %v\n%s", err, tail(stderr.Bytes()))
	case <-timeout.C:
		return 0, 0, fmt.Errorf("predictor did not poll within a minute\n%s", tail(stderr.Bytes()))
	case <-ctx.Done():
		return 0, 0, ctx.Err()
	}
	select {
	case res := <-api.Result():
		if res.Error {
			return 0, 0, fmt.Errorf("first invocation failed: %s\n%s", res.Body, tail(stderr.Bytes()))
		}
		if f, err := batchFailures(res.Body); err != nil || len(f) != 0 {
			return 0, 0, fmt.Errorf("first invocation: failures %v %v", f, err)
		}
		first = res.At.Sub(start)
	case <-timeout.C:
		return 0, 0, fmt.Errorf("no answer to the first event within a minute\n%s", tail(stderr.Bytes()))
	case <-ctx.Done():
		return 0, 0, ctx.Err()
	}
	return ready, first, nil
}
