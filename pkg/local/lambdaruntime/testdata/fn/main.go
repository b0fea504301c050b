// Command fn is the test function of package lambdaruntime: an aws-lambda-go
// handler whose behaviour the event chooses. FN_INIT chooses a misbehaving
// or slow init; FN_CHILD makes the binary a detached helper instead.
package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

type event struct {
	Mode string   `json:"mode"`
	Ms   int      `json:"ms"`
	File string   `json:"file"`
	Msg  string   `json:"msg"`
	Vars []string `json:"vars"`
}

type reply struct {
	Pid        int               `json:"pid"`
	Msg        string            `json:"msg,omitempty"`
	RequestID  string            `json:"request_id"`
	DeadlineMs int64             `json:"deadline_ms"`
	Vars       map[string]string `json:"vars,omitempty"`
}

// FnError is the handler's error type; aws-lambda-go reports its name.
type FnError struct{ Msg string }

func (e *FnError) Error() string { return e.Msg }

func handle(ctx context.Context, ev event) (reply, error) {
	out := reply{Pid: os.Getpid(), Msg: ev.Msg}
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		out.RequestID = lc.AwsRequestID
	}
	if dl, ok := ctx.Deadline(); ok {
		out.DeadlineMs = dl.UnixMilli()
	}
	sleep := time.Duration(ev.Ms) * time.Millisecond
	switch ev.Mode {
	case "echo":
	case "sleep": // then respond
		time.Sleep(sleep)
	case "error":
		return reply{}, &FnError{Msg: ev.Msg}
	case "panic":
		panic(ev.Msg)
	case "exit":
		os.Exit(3)
	case "background": // respond, and keep appending a line every 5 ms
		// The file and its first line exist before the response, so the
		// test never races the goroutine's start.
		f, err := os.OpenFile(ev.File, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return reply{}, err
		}
		fmt.Fprintln(f, "start")
		go func() {
			defer f.Close()
			for i := 0; i < 4000; i++ {
				fmt.Fprintf(f, "%d\n", i)
				time.Sleep(5 * time.Millisecond)
			}
		}()
	case "overrun": // ignore the deadline, then write a marker and respond
		time.Sleep(sleep)
		_ = os.WriteFile(ev.File, []byte("written after the deadline\n"), 0o600)
	case "escape": // a helper outside the process group answers after the deadline
		dl, _ := ctx.Deadline()
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(),
			"FN_CHILD=late-response",
			"FN_REQUEST_ID="+out.RequestID,
			"FN_AT_MS="+strconv.FormatInt(dl.Add(sleep).UnixMilli(), 10),
			"FN_OUT="+ev.File)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			return reply{}, err
		}
		_ = cmd.Process.Release()
		time.Sleep(time.Until(dl) + 10*time.Second)
	case "env":
		out.Vars = map[string]string{}
		for _, k := range ev.Vars {
			if v, ok := os.LookupEnv(k); ok {
				out.Vars[k] = v
			}
		}
	default:
		return reply{}, fmt.Errorf("unknown mode %q", ev.Mode)
	}
	return out, nil
}

// lateResponse posts a response to FN_REQUEST_ID at FN_AT_MS and records what
// the Runtime API answered in FN_OUT.
func lateResponse() {
	at, _ := strconv.ParseInt(os.Getenv("FN_AT_MS"), 10, 64)
	time.Sleep(time.Until(time.UnixMilli(at)))
	url := "http://" + os.Getenv("AWS_LAMBDA_RUNTIME_API") + "/2018-06-01/runtime/invocation/" +
		os.Getenv("FN_REQUEST_ID") + "/response"
	result := ""
	resp, err := http.Post(url, "application/json", bytes.NewReader([]byte(`{"msg":"late"}`)))
	if err != nil {
		result = "error: " + err.Error()
	} else {
		resp.Body.Close()
		result = "status " + strconv.Itoa(resp.StatusCode)
	}
	_ = os.WriteFile(os.Getenv("FN_OUT"), []byte(result+"\n"), 0o600)
}

func main() {
	if os.Getenv("FN_CHILD") == "late-response" {
		lateResponse()
		return
	}
	switch os.Getenv("FN_INIT") {
	case "sleep":
		time.Sleep(30 * time.Second)
	case "slow": // a long but successful init: FN_INIT_MS milliseconds
		ms, _ := strconv.Atoi(os.Getenv("FN_INIT_MS"))
		time.Sleep(time.Duration(ms) * time.Millisecond)
	case "exit":
		os.Exit(4)
	case "error":
		url := "http://" + os.Getenv("AWS_LAMBDA_RUNTIME_API") + "/2018-06-01/runtime/init/error"
		req, _ := http.NewRequest(http.MethodPost, url,
			bytes.NewReader([]byte(`{"errorMessage":"no config","errorType":"InitConfigError"}`)))
		req.Header.Set("Lambda-Runtime-Function-Error-Type", "Runtime.InitError")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
		os.Exit(1)
	}
	lambda.Start(handle)
}
