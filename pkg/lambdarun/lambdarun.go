// Package lambdarun is the shared entry point of the functions: under Lambda it
// hands the handler to the runtime; outside Lambda, `-event FILE` (or `-event -`
// for stdin) runs the handler once on that event and prints its response, the
// way `sam local invoke -e` does.
package lambdarun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

// Init builds a function's handler at cold start: its configuration, its
// clients and the handler (any signature aws-lambda-go accepts).
type Init func(ctx context.Context) (handler any, err error)

// Main is both functions' entry point. It parses the flags (-h prints usage
// and the flags and exits 0 without building anything), runs init once and
// starts the handler the way its environment expects: under Lambda it hands
// it to the runtime; outside, -event runs it once. An init error is
// reported to the Runtime API's init/error endpoint before the process
// exits, so the invoke's answer (and `aws lambda invoke`) carries its
// message, not only the log.
func Main(name, usage string, init Init) {
	fs := flag.NewFlagSet(name, flag.ExitOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	eventPath := fs.String("event", "", "run once on this event `file` (- for stdin) instead of under Lambda")
	timeout := fs.Duration("timeout", 5*time.Minute, "local invocation deadline, like the function's timeout")
	_ = fs.Parse(os.Args[1:])

	runtimeAPI := os.Getenv(runtimeAPIVariable)
	if *eventPath == "" && runtimeAPI == "" {
		fmt.Fprintf(os.Stderr, "%s: not running under Lambda; use -event FILE (or -event -) to invoke once locally\n", name)
		os.Exit(2)
	}
	ctx := context.Background()
	handler, err := init(ctx)
	if err != nil {
		if runtimeAPI == "" {
			// Run by hand: one line, and where the environment comes from.
			fmt.Fprintln(os.Stderr, LocalInitError(name, err))
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		if rerr := ReportInitError(ctx, runtimeAPI, err); rerr != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, rerr)
		}
		os.Exit(1)
	}
	if *eventPath == "" {
		lambda.Start(handler)
		return
	}

	out, err := InvokeFile(ctx, handler, *eventPath, *timeout)
	if len(out) > 0 {
		fmt.Println(string(out))
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
}

// LocalInitError is a cold start that failed outside Lambda (-event), in
// one line: the configuration's complaints joined, then where a complete
// environment comes from. Run by hand without `geolocate local --serve`'s
// export line, the predictor listed three missing variables, one a line,
// and left the newcomer to find which tool sets them.
func LocalInitError(name string, err error) string {
	msg := strings.Join(strings.FieldsFunc(err.Error(), func(r rune) bool { return r == '\n' }), "; ")
	return fmt.Sprintf("%s: %s (to run a function by hand: `bin/geolocate local --serve` in another shell prints an export line that sets its environment for the local parts; paste it here first)", name, msg)
}

// runtimeAPIVariable holds the Runtime API's host:port under Lambda.
const runtimeAPIVariable = "AWS_LAMBDA_RUNTIME_API"

// InitError is a failed cold start as reported to the Runtime API: its
// errorType is "InitError" by aws-lambda-go's own rule (the error's type
// name), whatever the cause's type, and its message the cause's.
type InitError struct{ Err error }

func (e *InitError) Error() string { return e.Err.Error() }
func (e *InitError) Unwrap() error { return e.Err }

// ReportInitError posts err to the Runtime API at runtimeAPI (host:port) as
// the init error: POST /2018-06-01/runtime/init/error with the
// Lambda-Runtime-Function-Error-Type header and the error document
// aws-lambda-go posts for a failed invocation ({"errorMessage",
// "errorType"}, messages.InvokeResponse_Error). aws-lambda-go has no
// exported way to report an init error. The runtime must exit afterwards.
func ReportInitError(ctx context.Context, runtimeAPI string, err error) error {
	ierr := &InitError{Err: err}
	doc := messages.InvokeResponse_Error{Message: ierr.Error(), Type: errorType(ierr)}
	body, merr := json.Marshal(doc)
	if merr != nil {
		return fmt.Errorf("report init error: %w", merr)
	}
	url := "http://" + runtimeAPI + "/2018-06-01/runtime/init/error"
	req, rerr := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if rerr != nil {
		return fmt.Errorf("report init error: %w", rerr)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Lambda-Runtime-Function-Error-Type", doc.Type)
	// The Runtime API is link-local: never through a proxy, as
	// aws-lambda-go's own client.
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: nil}}
	resp, derr := client.Do(req)
	if derr != nil {
		return fmt.Errorf("report init error: %w", derr)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("report init error: %s answered %s", url, resp.Status)
	}
	return nil
}

// errorType names an error as aws-lambda-go does: its type's name, without
// the pointer.
func errorType(err error) string {
	t := reflect.TypeOf(err)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

// InvokeFile runs handler once on the event in path ("-" reads stdin), with a
// Lambda context carrying a local request id and the given deadline.
func InvokeFile(ctx context.Context, handler any, path string, timeout time.Duration) ([]byte, error) {
	payload, err := readEvent(path)
	if err != nil {
		return nil, err
	}
	return Invoke(ctx, handler, payload, timeout)
}

// Invoke runs handler once on payload through the same reflection-based
// adapter the Lambda runtime uses, so a local run decodes the event exactly as
// Lambda would. As on Lambda, the deadline is the invocation's start plus
// timeout, and a response that comes after it does not count: the
// invocation timed out (ErrTimedOut). In process, the handler cannot be
// frozen or killed at the deadline as Lambda does; the strict runner in
// pkg/local/lambdaruntime runs the built function for that.
//
// A deadline ctx carries does not shorten the invocation's: a caller
// bounded by its own (a test, a local run near its end) would otherwise
// hand the handler less than the function's timeout, and a handler that
// returns what it has no time left for would return all of it. Cancelling
// ctx still cancels the invocation.
func Invoke(ctx context.Context, handler any, payload []byte, timeout time.Duration) ([]byte, error) {
	caller := ctx
	ctx, cancel := context.WithTimeout(context.WithoutCancel(caller), timeout)
	defer cancel()
	defer context.AfterFunc(caller, cancel)()
	deadline, _ := ctx.Deadline()
	ctx = lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{
		AwsRequestID:       fmt.Sprintf("local-%d", time.Now().UnixNano()),
		InvokedFunctionArn: "arn:aws:lambda:local:000000000000:function:local",
	})
	out, err := lambda.NewHandler(handler).Invoke(ctx, payload)
	if time.Now().After(deadline) {
		return nil, fmt.Errorf("%w after %s", ErrTimedOut, timeout)
	}
	return out, err
}

// ErrTimedOut is Lambda's "Task timed out": the handler had not answered by
// the deadline, so whatever it answered later is discarded.
var ErrTimedOut = errors.New("task timed out")

func readEvent(path string) ([]byte, error) {
	var (
		b   []byte
		err error
	)
	if path == "-" {
		b, err = io.ReadAll(io.LimitReader(os.Stdin, 6<<20))
	} else {
		b, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("read event %s: %w", path, err)
	}
	if len(b) == 0 {
		return nil, errors.New("read event: empty input")
	}
	return b, nil
}

// MetricsWriter is where Embedded Metric Format lines go: stdout under
// Lambda, where CloudWatch extracts them from the log stream; stderr in a
// local `-event` run, whose stdout carries the handler's response.
func MetricsWriter() io.Writer {
	if os.Getenv(runtimeAPIVariable) != "" {
		return os.Stdout
	}
	return os.Stderr
}
