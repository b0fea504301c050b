// Package lambdarun is the shared entry point of the functions: under Lambda it
// hands the handler to the runtime; outside Lambda, `-event FILE` (or `-event -`
// for stdin) runs the handler once on that event and prints its response, the
// way `sam local invoke -e` does.
package lambdarun

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

// Main starts handler the way its environment expects. It never returns under
// Lambda; locally it exits with status 1 when the handler returns an error.
func Main(name string, handler any) {
	fs := flag.NewFlagSet(name, flag.ExitOnError)
	eventPath := fs.String("event", "", "run once on this event `file` (- for stdin) instead of under Lambda")
	timeout := fs.Duration("timeout", 5*time.Minute, "local invocation deadline, like the function's timeout")
	_ = fs.Parse(os.Args[1:])

	if *eventPath == "" {
		if os.Getenv("AWS_LAMBDA_RUNTIME_API") == "" {
			fmt.Fprintf(os.Stderr, "%s: not running under Lambda; use -event FILE (or -event -) to invoke once locally\n", name)
			os.Exit(2)
		}
		lambda.Start(handler)
		return
	}

	out, err := InvokeFile(context.Background(), handler, *eventPath, *timeout)
	if len(out) > 0 {
		fmt.Println(string(out))
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
		os.Exit(1)
	}
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
// Lambda would. As on Lambda, a response that comes after the deadline does
// not count: the invocation timed out (ErrTimedOut). In process, the handler
// cannot be frozen or killed at the deadline as Lambda does; the strict
// runner in pkg/local/lambdaruntime runs the built function for that.
func Invoke(ctx context.Context, handler any, payload []byte, timeout time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
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
	if os.Getenv("AWS_LAMBDA_RUNTIME_API") != "" {
		return os.Stdout
	}
	return os.Stderr
}
