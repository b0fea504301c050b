package lambdaruntime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/syncbuf"
)

// fnBinary is testdata/fn, built once per test binary run.
var fnBinary string

func TestMain(m *testing.M) {
	if runtime.GOOS != "linux" {
		fmt.Println("lambdaruntime: skipped: the strict model needs Linux")
		os.Exit(0)
	}
	dir, err := os.MkdirTemp("", "lambdaruntime-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	fnBinary, err = BuildFunction(ctx, "./testdata/fn", dir)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		_ = os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

type reply struct {
	Pid        int               `json:"pid"`
	Msg        string            `json:"msg"`
	RequestID  string            `json:"request_id"`
	DeadlineMs int64             `json:"deadline_ms"`
	Vars       map[string]string `json:"vars"`
}

// start runs the test function with a 1 s timeout (unless cfg says
// otherwise), its logs in the test log on failure.
func start(t *testing.T, cfg Config) *Runtime {
	t.Helper()
	cfg.Binary = fnBinary
	if cfg.Timeout == 0 {
		cfg.Timeout = time.Second
	}
	logs := &syncbuf.Buffer{}
	cfg.Stderr = logs
	r, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("function logs:\n%s", logs.String())
		}
	})
	return r
}

func invoke(t *testing.T, r *Runtime, event map[string]any) Result {
	t.Helper()
	b, err := json.Marshal(event)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := r.Invoke(ctx, b)
	if err != nil {
		t.Fatalf("Invoke(%s): %v", b, err)
	}
	return res
}

func decode(t *testing.T, res Result) reply {
	t.Helper()
	if res.Status != Succeeded {
		t.Fatalf("status %v (%s: %s), want Succeeded", res.Status, res.ErrorType, res.ErrorMessage)
	}
	var out reply
	if err := json.Unmarshal(res.Payload, &out); err != nil {
		t.Fatalf("payload %q: %v", res.Payload, err)
	}
	return out
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

func TestEchoThenWarm(t *testing.T) {
	r := start(t, Config{})
	first := invoke(t, r, map[string]any{"mode": "echo", "msg": "one"})
	a := decode(t, first)
	if !first.ColdStart || first.InitDuration <= 0 {
		t.Errorf("first invocation: ColdStart %v, InitDuration %v; want a cold start", first.ColdStart, first.InitDuration)
	}
	if a.Msg != "one" || a.RequestID != first.RequestID {
		t.Errorf("reply %+v, want msg one and request id %s", a, first.RequestID)
	}
	second := invoke(t, r, map[string]any{"mode": "echo", "msg": "two"})
	b := decode(t, second)
	if second.ColdStart {
		t.Error("second invocation was a cold start; want warm")
	}
	if b.Pid != a.Pid || b.Msg != "two" {
		t.Errorf("second reply %+v from pid %d; want msg two from the same process %d", b, b.Pid, a.Pid)
	}
	if first.RequestID == second.RequestID {
		t.Error("request ids repeat")
	}
	s := r.Stats()
	if s.Invocations != 2 || s.Succeeded != 2 || s.ColdStarts != 1 || s.Errors() != 0 || len(s.Durations) != 2 {
		t.Errorf("stats %+v", s)
	}
}

func TestTimeoutKillsTheProcess(t *testing.T) {
	r := start(t, Config{Timeout: time.Second})
	warm := decode(t, invoke(t, r, map[string]any{"mode": "echo"}))

	marker := filepath.Join(t.TempDir(), "marker")
	t0 := time.Now()
	res := invoke(t, r, map[string]any{"mode": "overrun", "ms": 1500, "file": marker})
	took := time.Since(t0)
	if res.Status != Timeout || res.ErrorType != "Sandbox.Timedout" ||
		!strings.Contains(res.ErrorMessage, "Task timed out after 1.00 seconds") {
		t.Fatalf("result %v %s %q; want Timeout", res.Status, res.ErrorType, res.ErrorMessage)
	}
	if took < time.Second || took > 1500*time.Millisecond {
		t.Errorf("Invoke returned after %v; want about the 1 s timeout", took)
	}
	if res.Duration != time.Second || res.Payload != nil {
		t.Errorf("Duration %v, payload %q", res.Duration, res.Payload)
	}
	if alive(warm.Pid) {
		t.Errorf("process %d still alive after the timeout", warm.Pid)
	}
	// The handler would write its marker 1.5 s in; give it until 2 s.
	time.Sleep(time.Until(t0.Add(2 * time.Second)))
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("marker written after the deadline exists (stat: %v): the process ran on", err)
	}

	next := invoke(t, r, map[string]any{"mode": "echo"})
	n := decode(t, next)
	if !next.ColdStart || n.Pid == warm.Pid {
		t.Errorf("after a timeout: ColdStart %v, pid %d (was %d); want a new process", next.ColdStart, n.Pid, warm.Pid)
	}
	s := r.Stats()
	if s.Invocations != 3 || s.Timeouts != 1 || s.ColdStarts != 2 || s.Errors() != 1 {
		t.Errorf("stats %+v", s)
	}
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Count(b, []byte("\n"))
}

func TestFrozenBetweenInvocations(t *testing.T) {
	r := start(t, Config{Timeout: 2 * time.Second})
	file := filepath.Join(t.TempDir(), "lines")
	// The goroutine starts before the response; give it time to write.
	first := decode(t, invoke(t, r, map[string]any{"mode": "background", "file": file}))
	before := countLines(t, file)
	time.Sleep(400 * time.Millisecond)
	after := countLines(t, file)
	if after != before {
		t.Fatalf("the background goroutine wrote %d lines while the environment was frozen", after-before)
	}
	if !alive(first.Pid) {
		t.Fatal("the frozen process is gone")
	}

	// It runs again during the next invocation, and only then.
	res := invoke(t, r, map[string]any{"mode": "sleep", "ms": 300})
	if decode(t, res).Pid != first.Pid || res.ColdStart {
		t.Fatal("the second invocation did not reuse the frozen process")
	}
	during := countLines(t, file)
	if during-after < 10 {
		t.Errorf("%d lines written during a 300 ms invocation; want the goroutine to resume", during-after)
	}
	time.Sleep(300 * time.Millisecond)
	if n := countLines(t, file); n != during {
		t.Errorf("%d lines written after the second response; want none", n-during)
	}
}

func TestFunctionError(t *testing.T) {
	r := start(t, Config{})
	res := invoke(t, r, map[string]any{"mode": "error", "msg": "bad input"})
	if res.Status != FunctionError || res.ErrorType != "FnError" || res.ErrorMessage != "bad input" || res.Payload != nil {
		t.Fatalf("result %v %q %q %q; want FunctionError FnError \"bad input\"", res.Status, res.ErrorType, res.ErrorMessage, res.Payload)
	}
	// A handled error keeps the environment.
	next := invoke(t, r, map[string]any{"mode": "echo"})
	decode(t, next)
	if next.ColdStart {
		t.Error("the environment was replaced after a handled error")
	}
	if s := r.Stats(); s.FunctionErrors != 1 || s.Errors() != 1 || s.Invocations != 2 {
		t.Errorf("stats %+v", s)
	}
}

func TestPanicReportsThenColdStarts(t *testing.T) {
	r := start(t, Config{})
	res := invoke(t, r, map[string]any{"mode": "panic", "msg": "boom"})
	if res.Status != FunctionError || res.ErrorType != "string" || res.ErrorMessage != "boom" {
		t.Fatalf("result %v %q %q; want FunctionError string boom", res.Status, res.ErrorType, res.ErrorMessage)
	}
	// aws-lambda-go exits after reporting a panic, once thawed.
	next := invoke(t, r, map[string]any{"mode": "echo"})
	decode(t, next)
	if !next.ColdStart {
		t.Error("the invocation after a panic was warm; want a cold start")
	}
}

func TestCrash(t *testing.T) {
	r := start(t, Config{})
	pid := decode(t, invoke(t, r, map[string]any{"mode": "echo"})).Pid
	res := invoke(t, r, map[string]any{"mode": "exit"})
	if res.Status != Crashed || res.ErrorType != "Runtime.ExitError" || !strings.Contains(res.ErrorMessage, "exit status 3") {
		t.Fatalf("result %v %q %q; want Crashed Runtime.ExitError exit status 3", res.Status, res.ErrorType, res.ErrorMessage)
	}
	if res.Duration >= time.Second {
		t.Errorf("crash took %v to notice", res.Duration)
	}
	next := invoke(t, r, map[string]any{"mode": "echo"})
	if n := decode(t, next); !next.ColdStart || n.Pid == pid {
		t.Errorf("after a crash: ColdStart %v, pid %d (was %d)", next.ColdStart, n.Pid, pid)
	}
	if s := r.Stats(); s.Crashes != 1 || s.ColdStarts != 2 {
		t.Errorf("stats %+v", s)
	}
}

func TestDeadlineSeenByTheFunction(t *testing.T) {
	const timeout = 1500 * time.Millisecond
	r := start(t, Config{Timeout: timeout})
	for i, want := range []bool{true, false} { // cold, then warm
		t0 := time.Now()
		res := invoke(t, r, map[string]any{"mode": "echo"})
		t1 := time.Now()
		out := decode(t, res)
		if res.ColdStart != want {
			t.Fatalf("invocation %d: ColdStart %v", i, res.ColdStart)
		}
		lo, hi := t0.Add(timeout).UnixMilli(), t1.Add(timeout).UnixMilli()
		if out.DeadlineMs < lo || out.DeadlineMs > hi {
			t.Errorf("invocation %d: ctx.Deadline() %d ms; want start+timeout in [%d, %d]", i, out.DeadlineMs, lo, hi)
		}
		// The start is after init, not before it.
		if want && out.DeadlineMs < t0.Add(res.InitDuration+timeout).UnixMilli()-1 {
			t.Errorf("the deadline %d counts init (%v) against the invocation", out.DeadlineMs, res.InitDuration)
		}
	}
}

func TestEnvironment(t *testing.T) {
	t.Setenv("LAMBDARUNTIME_TEST_HOST_ONLY", "leak")
	r := start(t, Config{FunctionName: "predictor", Region: "eu-west-1", MemorySize: 512,
		Env: map[string]string{"TABLE_NAME": "jobs"}})
	vars := []string{"TABLE_NAME", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_LAMBDA_FUNCTION_NAME",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "AWS_LAMBDA_FUNCTION_VERSION", "_HANDLER", "LAMBDA_TASK_ROOT",
		"AWS_LAMBDA_RUNTIME_API", "TZ", "LAMBDARUNTIME_TEST_HOST_ONLY", "HOME"}
	got := decode(t, invoke(t, r, map[string]any{"mode": "env", "vars": vars})).Vars
	want := map[string]string{
		"TABLE_NAME": "jobs", "AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "eu-west-1",
		"AWS_LAMBDA_FUNCTION_NAME": "predictor", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "512",
		"AWS_LAMBDA_FUNCTION_VERSION": "$LATEST", "_HANDLER": "bootstrap",
		"LAMBDA_TASK_ROOT": filepath.Dir(fnBinary), "TZ": ":UTC",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s=%q, want %q", k, got[k], v)
		}
	}
	if api := got["AWS_LAMBDA_RUNTIME_API"]; !strings.HasPrefix(api, "127.0.0.1:") {
		t.Errorf("AWS_LAMBDA_RUNTIME_API=%q, want 127.0.0.1:PORT", api)
	}
	for _, k := range []string{"LAMBDARUNTIME_TEST_HOST_ONLY", "HOME"} {
		if v, ok := got[k]; ok {
			t.Errorf("%s=%q inherited from the test process", k, v)
		}
	}
}

func TestStartRejectsReservedVariables(t *testing.T) {
	for _, k := range []string{"AWS_REGION", "AWS_LAMBDA_RUNTIME_API", "_HANDLER"} {
		if _, err := Start(Config{Binary: fnBinary, Env: map[string]string{k: "x"}}); err == nil {
			t.Errorf("Start accepted reserved variable %s", k)
		}
	}
	if _, err := Start(Config{Binary: fnBinary, Timeout: 16 * time.Minute}); err == nil {
		t.Error("Start accepted a 16 minute timeout")
	}
	if _, err := Start(Config{Binary: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Error("Start accepted a missing binary")
	}
}

// The bench's cold-start figures (cmd/benchreport/coldstart.go) are a cold
// invocation's InitDuration (exec to the first poll) and InitDuration plus
// Duration (to the answer): init's time must land in the one, the handler's
// in the other, and together they fit in the call.
func TestColdStartTimesInitThenInvocation(t *testing.T) {
	const initTime, handlerTime = 300 * time.Millisecond, 200 * time.Millisecond
	r := start(t, Config{Env: map[string]string{"FN_INIT": "slow", "FN_INIT_MS": strconv.Itoa(int(initTime / time.Millisecond))}})
	t0 := time.Now()
	res := invoke(t, r, map[string]any{"mode": "sleep", "ms": handlerTime.Milliseconds()})
	took := time.Since(t0)
	decode(t, res)
	if !res.ColdStart || res.InitDuration < initTime || res.Duration < handlerTime {
		t.Errorf("cold %v, init %v, duration %v; want a cold start, init >= %v, duration >= %v", res.ColdStart, res.InitDuration, res.Duration, initTime, handlerTime)
	}
	if res.Duration >= initTime+handlerTime {
		t.Errorf("duration %v includes init: want it to start when init ends", res.Duration)
	}
	if sum := res.InitDuration + res.Duration; sum > took {
		t.Errorf("init %v + duration %v = %v, longer than the call (%v)", res.InitDuration, res.Duration, sum, took)
	}
	if warm := invoke(t, r, map[string]any{"mode": "echo"}); warm.ColdStart || warm.InitDuration != 0 {
		t.Errorf("second invocation: cold %v, init %v; want warm with no init", warm.ColdStart, warm.InitDuration)
	}
}

func TestInitFailures(t *testing.T) {
	cases := []struct {
		init, errType, msg string
	}{
		{"sleep", "Sandbox.Timedout", "INIT phase timed out after 0.30 seconds"},
		{"exit", "Runtime.ExitError", "exit status 4"},
		{"error", "InitConfigError", "no config"},
	}
	for _, c := range cases {
		t.Run(c.init, func(t *testing.T) {
			r := start(t, Config{InitTimeout: 300 * time.Millisecond, Env: map[string]string{"FN_INIT": c.init}})
			t0 := time.Now()
			res := invoke(t, r, map[string]any{"mode": "echo"})
			if res.Status != InitFailed || res.ErrorType != c.errType || !strings.Contains(res.ErrorMessage, c.msg) || !res.ColdStart {
				t.Errorf("result %v %q %q cold %v; want InitFailed %s %q", res.Status, res.ErrorType, res.ErrorMessage, res.ColdStart, c.errType, c.msg)
			}
			if took := time.Since(t0); took > 2*time.Second {
				t.Errorf("init failure took %v", took)
			}
			if s := r.Stats(); s.InitFailures != 1 || s.Errors() != 1 || len(s.Durations) != 0 {
				t.Errorf("stats %+v", s)
			}
		})
	}
}

// A helper that escapes the process group survives the kill, but its answer
// after the deadline never counts.
func TestEscapedHelperCannotAnswerLate(t *testing.T) {
	r := start(t, Config{Timeout: time.Second})
	out := filepath.Join(t.TempDir(), "late")
	res := invoke(t, r, map[string]any{"mode": "escape", "ms": 200, "file": out})
	if res.Status != Timeout {
		t.Fatalf("status %v (%s %s), want Timeout", res.Status, res.ErrorType, res.ErrorMessage)
	}
	var got []byte
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(out); err == nil && bytes.HasSuffix(b, []byte("\n")) {
			got = b
			break
		}
	}
	if got == nil {
		t.Fatal("the helper never reported its late post")
	}
	t.Logf("the helper's late post: %s", bytes.TrimSpace(got))
	if bytes.Contains(got, []byte("status 202")) {
		t.Errorf("the late response was accepted: %s", got)
	}
	if s := r.Stats(); s.Succeeded != 0 || s.Timeouts != 1 {
		t.Errorf("stats %+v", s)
	}
}

// An answer whose body completes after the deadline is refused, even before
// the deadline timer has killed the process.
func TestAnswerAfterDeadlineRefused(t *testing.T) {
	rt := &Runtime{cfg: Config{Timeout: time.Second, FunctionName: "f"}, logw: &lockedWriter{w: &bytes.Buffer{}}}
	env := &environment{rt: rt, gone: make(chan struct{})}
	inv := &invocation{id: "req-1", start: time.Now().Add(-2 * time.Second), deadline: time.Now().Add(-time.Second),
		done: make(chan outcome, 1), handedOut: true}
	env.inv = inv
	for _, action := range []string{"response", "error"} {
		w := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, apiPrefix+"invocation/req-1/"+action, strings.NewReader(`{"ok":true}`))
		env.ServeHTTP(w, req)
		if w.Code != http.StatusGone {
			t.Errorf("late %s: %d %s; want 410", action, w.Code, w.Body)
		}
	}
	select {
	case o := <-inv.done:
		t.Errorf("a late answer was counted: %+v", o)
	default:
	}
	if inv.finished {
		t.Error("a late answer decided the invocation")
	}
	// And an unknown request id is refused.
	w := httptest.NewRecorder()
	env.ServeHTTP(w, httptest.NewRequest(http.MethodPost, apiPrefix+"invocation/other/response", strings.NewReader(`{}`)))
	if w.Code != http.StatusBadRequest {
		t.Errorf("unknown request id: %d; want 400", w.Code)
	}
}

func TestOneInvocationAtATime(t *testing.T) {
	r := start(t, Config{})
	decode(t, invoke(t, r, map[string]any{"mode": "echo"})) // cold start out of the way
	var wg sync.WaitGroup
	results := make([]Result, 2)
	t0 := time.Now()
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b, _ := json.Marshal(map[string]any{"mode": "sleep", "ms": 200})
			res, err := r.Invoke(context.Background(), b)
			if err != nil {
				t.Error(err)
			}
			results[i] = res
		}()
	}
	wg.Wait()
	if took := time.Since(t0); took < 400*time.Millisecond {
		t.Errorf("two 200 ms invocations finished in %v: they overlapped", took)
	}
	for _, res := range results {
		if res.Status != Succeeded || res.ColdStart {
			t.Errorf("result %+v", res)
		}
	}
}

func TestCloseKillsTheFrozenProcess(t *testing.T) {
	r := start(t, Config{})
	pid := decode(t, invoke(t, r, map[string]any{"mode": "echo"})).Pid
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if alive(pid) {
		t.Errorf("process %d survived Close", pid)
	}
	if _, err := r.Invoke(context.Background(), []byte(`{"mode":"echo"}`)); !errors.Is(err, ErrClosed) {
		t.Errorf("Invoke after Close: %v, want ErrClosed", err)
	}
}

func TestLogsCarryPlatformLines(t *testing.T) {
	logs := &syncbuf.Buffer{}
	r, err := Start(Config{Binary: fnBinary, Timeout: time.Second, Stderr: logs})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	res, err := r.Invoke(context.Background(), []byte(`{"mode":"echo"}`))
	if err != nil || res.Status != Succeeded {
		t.Fatalf("%v %v", res.Status, err)
	}
	for _, want := range []string{"START RequestId: " + res.RequestID, "END RequestId: " + res.RequestID,
		"REPORT RequestId: " + res.RequestID, "Init Duration: "} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("logs lack %q:\n%s", want, logs.String())
		}
	}
}
