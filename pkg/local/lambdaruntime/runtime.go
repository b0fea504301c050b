package lambdaruntime

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"
)

// Lambda's defaults and limits.
const (
	DefaultTimeout     = 3 * time.Second  // a new function's timeout
	MaxTimeout         = 15 * time.Minute // the largest timeout Lambda accepts
	DefaultInitTimeout = 10 * time.Second // the init phase's limit
	DefaultMemorySize  = 128              // MB
	// MaxPayloadSize is the largest request or response of a synchronous
	// invocation, in bytes.
	MaxPayloadSize = 6291556
)

// ErrClosed is returned by Invoke once the Runtime is closed.
var ErrClosed = errors.New("lambdaruntime: runtime closed")

// ErrRequestTooLarge is returned by Invoke for a payload over MaxPayloadSize;
// Lambda rejects such an invocation before any function runs.
var ErrRequestTooLarge = errors.New("lambdaruntime: request payload exceeds 6291556 bytes")

// Config describes one function.
type Config struct {
	Binary       string            // path to the built bootstrap (see BuildFunction)
	Env          map[string]string // the function's environment variables
	Timeout      time.Duration     // the function timeout; DefaultTimeout when zero
	InitTimeout  time.Duration     // DefaultInitTimeout when zero
	Stderr       io.Writer         // receives the process's stdout and stderr and the platform log lines; may be nil
	FunctionName string            // AWS_LAMBDA_FUNCTION_NAME; "function" when empty
	Region       string            // AWS_REGION and AWS_DEFAULT_REGION, set only when non-empty
	MemorySize   int               // MB, reported to the function only; DefaultMemorySize when zero
}

// Status is how an invocation ended.
type Status int

// The statuses of an invocation.
const (
	Succeeded     Status = iota + 1 // the runtime posted a response in time
	FunctionError                   // the runtime posted an error in time
	Timeout                         // nothing accepted by the deadline; the process was killed
	Crashed                         // the process exited during the invocation
	InitFailed                      // the cold start's init failed, timed out or exited
)

func (s Status) String() string {
	switch s {
	case Succeeded:
		return "Succeeded"
	case FunctionError:
		return "FunctionError"
	case Timeout:
		return "Timeout"
	case Crashed:
		return "Crashed"
	case InitFailed:
		return "InitFailed"
	}
	return "Status(" + strconv.Itoa(int(s)) + ")"
}

// Result is the outcome of one invocation.
type Result struct {
	RequestID    string
	Payload      []byte // the response, when Status == Succeeded
	Status       Status
	ErrorType    string // for every Status but Succeeded
	ErrorMessage string
	Duration     time.Duration // from the invocation's start to its end (the deadline on Timeout)
	InitDuration time.Duration // the init phase, on a cold start
	ColdStart    bool          // this invocation started a new process
}

// Stats counts invocations the way Lambda's metrics do.
type Stats struct {
	Invocations    int
	Succeeded      int
	FunctionErrors int
	Timeouts       int
	Crashes        int
	InitFailures   int
	ColdStarts     int
	// Durations holds each invocation's Duration in order, for those past
	// init (all but InitFailed).
	Durations []time.Duration
}

// Errors is Lambda's Errors metric: every invocation that did not succeed.
func (s Stats) Errors() int {
	return s.FunctionErrors + s.Timeouts + s.Crashes + s.InitFailures
}

// Runtime is one function's execution environment, created on demand.
type Runtime struct {
	cfg    Config
	logw   *lockedWriter
	sem    chan struct{} // one invocation at a time
	done   chan struct{} // closed by Close
	closer sync.Once

	mu     sync.Mutex
	env    *environment // the live environment, nil before a cold start
	closed bool
	stats  Stats
}

// Start validates cfg and returns a Runtime with no environment yet: the
// first Invoke is a cold start.
func Start(cfg Config) (*Runtime, error) {
	if err := supported(); err != nil {
		return nil, err
	}
	if cfg.Binary == "" {
		return nil, errors.New("lambdaruntime: Config.Binary is empty")
	}
	bin, err := filepath.Abs(cfg.Binary)
	if err != nil {
		return nil, fmt.Errorf("lambdaruntime: %w", err)
	}
	fi, err := os.Stat(bin)
	if err != nil {
		return nil, fmt.Errorf("lambdaruntime: bootstrap: %w", err)
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return nil, fmt.Errorf("lambdaruntime: bootstrap %s is not an executable file", bin)
	}
	cfg.Binary = bin
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Timeout < 0 || cfg.Timeout > MaxTimeout {
		return nil, fmt.Errorf("lambdaruntime: timeout %v is outside (0, %v]", cfg.Timeout, MaxTimeout)
	}
	if cfg.InitTimeout == 0 {
		cfg.InitTimeout = DefaultInitTimeout
	}
	if cfg.InitTimeout < 0 {
		return nil, fmt.Errorf("lambdaruntime: negative init timeout %v", cfg.InitTimeout)
	}
	if cfg.MemorySize == 0 {
		cfg.MemorySize = DefaultMemorySize
	}
	if cfg.MemorySize < 128 || cfg.MemorySize > 10240 {
		return nil, fmt.Errorf("lambdaruntime: memory size %d MB is outside [128, 10240]", cfg.MemorySize)
	}
	if cfg.FunctionName == "" {
		cfg.FunctionName = "function"
	}
	for k := range cfg.Env {
		if reserved[k] {
			return nil, fmt.Errorf("lambdaruntime: environment variable %s is reserved: Lambda sets it", k)
		}
		if k == "" {
			return nil, errors.New("lambdaruntime: empty environment variable name")
		}
	}
	out := cfg.Stderr
	if out == nil {
		out = io.Discard
	}
	return &Runtime{
		cfg:  cfg,
		logw: &lockedWriter{w: out},
		sem:  make(chan struct{}, 1),
		done: make(chan struct{}),
	}, nil
}

// reserved are the variables Lambda sets itself and refuses in a function's
// configuration (the credentials, which Lambda also reserves, are allowed:
// locally nothing else provides them).
var reserved = map[string]bool{
	"_HANDLER": true, "_X_AMZN_TRACE_ID": true, "AWS_DEFAULT_REGION": true, "AWS_REGION": true,
	"AWS_EXECUTION_ENV": true, "AWS_LAMBDA_FUNCTION_NAME": true, "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": true,
	"AWS_LAMBDA_FUNCTION_VERSION": true, "AWS_LAMBDA_INITIALIZATION_TYPE": true,
	"AWS_LAMBDA_LOG_GROUP_NAME": true, "AWS_LAMBDA_LOG_STREAM_NAME": true, "AWS_LAMBDA_RUNTIME_API": true,
	"LAMBDA_TASK_ROOT": true, "LAMBDA_RUNTIME_DIR": true,
}

// Stats returns a copy of the counters.
func (r *Runtime) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stats
	s.Durations = append([]time.Duration(nil), r.stats.Durations...)
	return s
}

// Close kills the environment's process, if any, and stops its Runtime API.
// An Invoke in progress returns ErrClosed.
func (r *Runtime) Close() error {
	r.closer.Do(func() {
		r.mu.Lock()
		r.closed = true
		env := r.env
		r.mu.Unlock()
		close(r.done)
		if env != nil {
			env.teardown()
		}
	})
	return nil
}

// Invoke runs one synchronous invocation. The error is for failures of the
// runner itself (a closed Runtime, a cancelled ctx, a bootstrap that cannot be
// started); the function's own failures are in Result.Status. Cancelling ctx
// mid-invocation discards the environment.
func (r *Runtime) Invoke(ctx context.Context, payload []byte) (Result, error) {
	if len(payload) > MaxPayloadSize {
		return Result{}, ErrRequestTooLarge
	}
	select {
	case r.sem <- struct{}{}:
	case <-ctx.Done():
		return Result{}, ctx.Err()
	case <-r.done:
		return Result{}, ErrClosed
	}
	defer func() { <-r.sem }()
	res, err := r.invoke(ctx, payload)
	if err != nil {
		return Result{}, err
	}
	r.record(res)
	return res, nil
}

func (r *Runtime) record(res Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := &r.stats
	s.Invocations++
	if res.ColdStart {
		s.ColdStarts++
	}
	switch res.Status {
	case Succeeded:
		s.Succeeded++
	case FunctionError:
		s.FunctionErrors++
	case Timeout:
		s.Timeouts++
	case Crashed:
		s.Crashes++
	case InitFailed:
		s.InitFailures++
	}
	if res.Status != InitFailed {
		s.Durations = append(s.Durations, res.Duration)
	}
}

func (r *Runtime) invoke(ctx context.Context, payload []byte) (Result, error) {
	res := Result{RequestID: newRequestID()}
	r.mu.Lock()
	env := r.env
	r.mu.Unlock()
	if env != nil {
		inv := r.newInvocation(res.RequestID, payload)
		o, err := r.run(ctx, env, inv, true)
		if err == nil {
			r.report(&res, inv, o)
			return res, nil
		}
		if !errors.Is(err, errExitedWhileIdle) {
			return Result{}, err
		}
		// The thawed process exited before asking for this event: it was
		// on its way out, so this invocation gets a new environment.
	}

	res.ColdStart = true
	env, initStart, err := r.spawn()
	if err != nil {
		return Result{}, err
	}
	fail, err := env.awaitInit(ctx, r.cfg.InitTimeout)
	res.InitDuration = time.Since(initStart)
	if err != nil {
		return Result{}, err
	}
	if fail != nil {
		res.Status, res.ErrorType, res.ErrorMessage = InitFailed, fail.errType, fail.errMsg
		r.logf("INIT_REPORT Init Duration: %s\tPhase: init\tStatus: error\tError Type: %s\n",
			ms(res.InitDuration), fail.errType)
		return res, nil
	}
	inv := r.newInvocation(res.RequestID, payload)
	o, err := r.run(ctx, env, inv, false)
	if err != nil {
		return Result{}, err
	}
	r.report(&res, inv, o)
	return res, nil
}

func (r *Runtime) report(res *Result, inv *invocation, o outcome) {
	res.Status, res.Payload, res.ErrorType, res.ErrorMessage = o.status, o.payload, o.errType, o.errMsg
	res.Duration = o.at.Sub(inv.start)
	if o.status == Timeout {
		res.Duration = r.cfg.Timeout
		r.logf("%s %s Task timed out after %.2f seconds\n",
			inv.deadline.UTC().Format("2006-01-02T15:04:05.000Z"), inv.id, r.cfg.Timeout.Seconds())
	}
	r.logf("END RequestId: %s\n", inv.id)
	line := fmt.Sprintf("REPORT RequestId: %s\tDuration: %s\tBilled Duration: %d ms\tMemory Size: %d MB",
		inv.id, ms(res.Duration), int64(math.Ceil(float64(res.Duration)/float64(time.Millisecond))), r.cfg.MemorySize)
	if res.ColdStart {
		line += "\tInit Duration: " + ms(res.InitDuration)
	}
	switch o.status {
	case Timeout:
		line += "\tStatus: timeout"
	case Crashed:
		line += "\tStatus: error\tError Type: " + o.errType
	}
	r.logf("%s\n", line)
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 2, 64) + " ms"
}

func (r *Runtime) logf(format string, args ...any) {
	fmt.Fprintf(r.logw, format, args...)
}

// errExitedWhileIdle: a thawed environment's process exited before it took
// the event.
var errExitedWhileIdle = errors.New("environment exited between invocations")

// invocation is one event handed to an environment.
type invocation struct {
	id              string
	payload         []byte
	start, deadline time.Time
	done            chan outcome // the outcome posted by the runtime; buffered

	// guarded by Runtime.mu
	handedOut bool // the runtime received the event
	finished  bool // the outcome is decided; nothing else counts
}

type outcome struct {
	status          Status
	payload         []byte
	errType, errMsg string
	at              time.Time
}

func (r *Runtime) newInvocation(id string, payload []byte) *invocation {
	start := time.Now()
	return &invocation{
		id:       id,
		payload:  payload,
		start:    start,
		deadline: start.Add(r.cfg.Timeout),
		done:     make(chan outcome, 1),
	}
}

// run hands inv to env (thawing it) and waits for the outcome, enforcing the
// deadline. warm reports whether env served an invocation before.
func (r *Runtime) run(ctx context.Context, env *environment, inv *invocation, warm bool) (outcome, error) {
	r.mu.Lock()
	env.inv = inv
	r.mu.Unlock()
	r.logf("START RequestId: %s Version: $LATEST\n", inv.id)
	env.thaw()
	timer := time.NewTimer(time.Until(inv.deadline))
	defer timer.Stop()
	events := env.events
	for {
		select {
		case events <- inv:
			events = nil
		case o := <-inv.done:
			return o, nil
		case <-timer.C:
			if r.claim(inv) {
				env.teardown() // the environment dies at the deadline
				return outcome{status: Timeout, errType: "Sandbox.Timedout",
					errMsg: fmt.Sprintf("RequestId: %s Error: Task timed out after %.2f seconds", inv.id, r.cfg.Timeout.Seconds()),
					at:     inv.deadline}, nil
			}
			return <-inv.done, nil
		case <-env.exited:
			if !r.claim(inv) {
				return <-inv.done, nil
			}
			env.teardown()
			if warm && events != nil {
				r.logf("RequestId: %s Environment exited between invocations: %s\n", inv.id, exitReason(env.waitErr))
				return outcome{}, errExitedWhileIdle
			}
			return outcome{status: Crashed, errType: "Runtime.ExitError",
				errMsg: fmt.Sprintf("RequestId: %s Error: Runtime exited %s", inv.id, exitReason(env.waitErr)),
				at:     time.Now()}, nil
		case <-ctx.Done():
			r.claim(inv)
			env.teardown()
			return outcome{}, ctx.Err()
		case <-r.done:
			return outcome{}, ErrClosed
		}
	}
}

// claim decides inv's outcome for the caller, unless it was decided already.
func (r *Runtime) claim(inv *invocation) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if inv.finished {
		return false
	}
	inv.finished = true
	return true
}

func exitReason(err error) string {
	if err == nil {
		return "without providing a reason"
	}
	return "with error: " + err.Error()
}

// environment is one process and the Runtime API it talks to.
type environment struct {
	rt      *Runtime
	addr    string
	srv     *http.Server
	cmd     *exec.Cmd
	pid     int
	exited  chan struct{} // closed once the process is reaped
	waitErr error         // valid once exited is closed
	gone    chan struct{} // closed by teardown

	ready     chan struct{} // closed at the runtime's first invocation/next
	readyOnce sync.Once
	initErr   chan outcome     // an init/error post; buffered
	events    chan *invocation // hands an event to a waiting invocation/next
	tornOnce  sync.Once
	inv       *invocation // the current invocation; guarded by rt.mu
	frozen    bool        // guarded by rt.mu
}

// spawn starts a new environment's process and makes it the live one.
func (r *Runtime) spawn() (*environment, time.Time, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("lambdaruntime: listen: %w", err)
	}
	env := &environment{
		rt:      r,
		addr:    ln.Addr().String(),
		exited:  make(chan struct{}),
		gone:    make(chan struct{}),
		ready:   make(chan struct{}),
		initErr: make(chan outcome, 1),
		events:  make(chan *invocation),
	}
	env.srv = &http.Server{Handler: env}
	go func() { _ = env.srv.Serve(ln) }()

	cmd := exec.Command(r.cfg.Binary)
	cmd.Dir = filepath.Dir(r.cfg.Binary)
	cmd.Env = r.environ(env.addr)
	cmd.Stdout = r.logw
	cmd.Stderr = r.logw
	cmd.WaitDelay = time.Second // a leftover holding the output pipe cannot block Wait
	isolate(cmd)
	env.cmd = cmd

	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		_ = env.srv.Close()
		return nil, time.Time{}, ErrClosed
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		r.mu.Unlock()
		_ = env.srv.Close()
		return nil, time.Time{}, fmt.Errorf("lambdaruntime: start bootstrap: %w", err)
	}
	env.pid = cmd.Process.Pid
	r.env = env
	r.mu.Unlock()
	go func() {
		env.waitErr = cmd.Wait()
		close(env.exited)
	}()
	return env, start, nil
}

// environ is the process's whole environment: nothing is inherited.
func (r *Runtime) environ(addr string) []string {
	c := r.cfg
	vars := []string{
		"AWS_LAMBDA_RUNTIME_API=" + addr,
		"AWS_LAMBDA_FUNCTION_NAME=" + c.FunctionName,
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=" + strconv.Itoa(c.MemorySize),
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"AWS_LAMBDA_INITIALIZATION_TYPE=on-demand",
		"AWS_LAMBDA_LOG_GROUP_NAME=/aws/lambda/" + c.FunctionName,
		"AWS_LAMBDA_LOG_STREAM_NAME=" + time.Now().UTC().Format("2006/01/02") + "/[$LATEST]" + randomHex(16),
		"_HANDLER=bootstrap",
		"LAMBDA_TASK_ROOT=" + filepath.Dir(c.Binary),
		"PATH=/usr/local/bin:/usr/bin/:/bin:/opt/bin",
		"LANG=en_US.UTF-8",
		"TZ=:UTC",
	}
	if c.Region != "" {
		vars = append(vars, "AWS_REGION="+c.Region, "AWS_DEFAULT_REGION="+c.Region)
	}
	keys := make([]string, 0, len(c.Env))
	for k := range c.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		vars = append(vars, k+"="+c.Env[k])
	}
	return vars
}

// initFailure is why a cold start's init failed.
type initFailure struct{ errType, errMsg string }

// awaitInit waits for the runtime's first invocation/next.
func (e *environment) awaitInit(ctx context.Context, limit time.Duration) (*initFailure, error) {
	timer := time.NewTimer(limit)
	defer timer.Stop()
	select {
	case <-e.ready:
		return nil, nil
	case o := <-e.initErr:
		e.teardown()
		return &initFailure{o.errType, o.errMsg}, nil
	case <-e.exited:
		e.teardown()
		select {
		case o := <-e.initErr: // posted init/error, then exited
			return &initFailure{o.errType, o.errMsg}, nil
		default:
		}
		return &initFailure{"Runtime.ExitError", "Runtime exited " + exitReason(e.waitErr)}, nil
	case <-timer.C:
		e.teardown()
		return &initFailure{"Sandbox.Timedout", fmt.Sprintf("INIT phase timed out after %.2f seconds", limit.Seconds())}, nil
	case <-ctx.Done():
		e.teardown()
		return nil, ctx.Err()
	case <-e.rt.done:
		return nil, ErrClosed
	}
}

// freeze stops every process of the environment until thaw.
func (e *environment) freeze() {
	e.rt.mu.Lock()
	e.frozen = true
	e.rt.mu.Unlock()
	stopGroup(e.pid)
}

func (e *environment) thaw() {
	e.rt.mu.Lock()
	frozen := e.frozen
	e.frozen = false
	e.rt.mu.Unlock()
	if frozen {
		continueGroup(e.pid)
	}
}

// teardown kills the process group, closes the environment's API and waits
// for the process to be reaped.
func (e *environment) teardown() {
	e.tornOnce.Do(func() {
		e.rt.mu.Lock()
		if e.rt.env == e {
			e.rt.env = nil
		}
		e.rt.mu.Unlock()
		if e.pid > 0 {
			killGroup(e.pid)
		}
		close(e.gone)
		_ = e.srv.Close()
	})
	if e.cmd == nil || e.cmd.Process == nil {
		return
	}
	select {
	case <-e.exited:
	case <-time.After(5 * time.Second):
	}
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

func randomHex(n int) string {
	b := make([]byte, n/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
