package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/bench"
	"github.com/geolocate-aws/geolocate/pkg/local/lambdaruntime"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
	"github.com/geolocate-aws/geolocate/pkg/local/syncbuf"
	"github.com/geolocate-aws/geolocate/pkg/shared/envvars"
)

// coldStartResult is the time from exec to the end of init (the first poll
// of the Runtime API: ready for the first event) and to the first answer.
type coldStartResult struct {
	Starts        int
	Ready         bench.Stats
	FirstResponse bench.Stats
}

// measureColdStarts starts the host-built predictor n times under the rig's
// Lambda Runtime API (pkg/local/lambdaruntime, the one every local use
// runs) and times each start. Each start gets a new image, so the first
// invocation does the full work (S3, claim, call, record).
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

// coldStart runs one cold invocation in a new Runtime. Lambda's limits
// apply as on AWS: init within 10 s, the answer within the stack's timeout.
// ready is the Runtime's InitDuration (exec to the first poll); first adds
// the invocation's Duration, which starts as init ends.
func coldStart(ctx context.Context, e *localEnv, st stack, bin string, i int) (ready, first time.Duration, err error) {
	obj, err := e.put(ctx, fmt.Sprintf("cold/%02d.jpg", i), fakeJPEG(300<<10, uint64(1000+i)))
	if err != nil {
		return 0, 0, err
	}
	payload, _, err := sqsEvent(ctx, sqsqueue.New(), obj)
	if err != nil {
		return 0, 0, err
	}
	logs := &syncbuf.Buffer{}
	rt, err := lambdaruntime.Start(runtimeConfig(e, st, bin, logs))
	if err != nil {
		return 0, 0, err
	}
	defer rt.Close()
	res, err := rt.Invoke(ctx, payload)
	if err != nil {
		return 0, 0, fmt.Errorf("cold start %d: %w", i, err)
	}
	if res.Status != lambdaruntime.Succeeded {
		return 0, 0, fmt.Errorf("first invocation: %v %s: %s\n%s", res.Status, res.ErrorType, res.ErrorMessage, tail([]byte(logs.String())))
	}
	if f, err := batchFailures(res.Payload); err != nil || len(f) != 0 {
		return 0, 0, fmt.Errorf("first invocation: failures %v %v", f, err)
	}
	return res.InitDuration, res.InitDuration + res.Duration, nil
}

// runtimeConfig is the predictor under lambdaruntime with the bench's
// environment (childEnv), less what Lambda sets itself and the Runtime
// refuses in a function's configuration: the region and the memory size,
// which it is given as such.
func runtimeConfig(e *localEnv, st stack, bin string, logs io.Writer) lambdaruntime.Config {
	env := map[string]string{}
	for _, kv := range childEnv(e, st) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	region := env["AWS_REGION"]
	delete(env, "AWS_REGION")
	delete(env, envvars.FunctionMemorySize)
	return lambdaruntime.Config{
		Binary: bin, Env: env, Timeout: st.Timeout, Stderr: logs,
		FunctionName: "predictor", Region: region, MemorySize: st.MemoryMB,
	}
}
