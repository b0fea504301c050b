package awsapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
)

// Lambda's invocation types (X-Amz-Invocation-Type).
const (
	InvocationRequestResponse = "RequestResponse"
	InvocationEvent           = "Event"
	invocationDryRun          = "DryRun"
)

// Function is a function the Lambda stand-in invokes in process.
type Function struct {
	Name string
	// Handler runs one invocation on its event; an error is the
	// function's error (Unhandled), as the runtime reports a handler's.
	Handler func(ctx context.Context, payload []byte) ([]byte, error)
	// Environment is what GetFunctionConfiguration reports (doctor reads
	// the predictor's settings from it).
	Environment map[string]string
	Timeout     time.Duration
	MemoryMB    int
}

// EventSourceMapping is a queue's trigger of a function, as
// ListEventSourceMappings reports it (the rig's poller does the polling).
type EventSourceMapping struct {
	Function       string
	EventSourceArn string
	BatchSize      int
}

// InvocationCounts are one function's invocations since the start.
type InvocationCounts struct {
	Sync, Async, Errors int
}

// Lambda serves Invoke (sync and Event), GetFunctionConfiguration and
// ListEventSourceMappings of registered functions over restJson1.
type Lambda struct {
	opts LambdaOptions

	mu        sync.Mutex
	functions map[string]Function
	mappings  []EventSourceMapping
	counts    map[string]*InvocationCounts

	// Event invocations run on their own goroutines until done or Close.
	async       sync.WaitGroup
	asyncCtx    context.Context
	cancelAsync context.CancelFunc
}

// LambdaOptions configure the Lambda stand-in.
type LambdaOptions struct {
	Region, AccountID string
	// Logger receives a line per failed Event invocation (nobody else
	// sees its error). Default: discarded.
	Logger *slog.Logger
}

// NewLambda returns a Lambda stand-in with no functions.
func NewLambda(optFns ...func(*LambdaOptions)) *Lambda {
	o := LambdaOptions{Region: sqsqueue.DefaultRegion, AccountID: sqsqueue.DefaultAccountID}
	for _, fn := range optFns {
		fn(&o)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Lambda{opts: o, functions: map[string]Function{}, counts: map[string]*InvocationCounts{}, asyncCtx: ctx, cancelAsync: cancel}
}

// Register adds f, replacing a function of the same name.
func (l *Lambda) Register(f Function) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.functions[f.Name] = f
	if l.counts[f.Name] == nil {
		l.counts[f.Name] = &InvocationCounts{}
	}
}

// AddEventSourceMapping records a queue's trigger of a function.
func (l *Lambda) AddEventSourceMapping(m EventSourceMapping) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.mappings = append(l.mappings, m)
}

// FunctionARN is the ARN of the function named name.
func (l *Lambda) FunctionARN(name string) string {
	return "arn:aws:lambda:" + l.opts.Region + ":" + l.opts.AccountID + ":function:" + name
}

// Invocations are the counts of every registered function, by name.
func (l *Lambda) Invocations() map[string]InvocationCounts {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]InvocationCounts, len(l.counts))
	for name, c := range l.counts {
		out[name] = *c
	}
	return out
}

// Close cancels the Event invocations still running and waits for them.
func (l *Lambda) Close() {
	l.cancelAsync()
	l.async.Wait()
}

// function finds a function by name, ARN or partial ARN, as Lambda takes
// any of them (a qualifier, ":$LATEST", is ignored: one version).
func (l *Lambda) function(ref string) (Function, error) {
	name := ref
	if i := strings.Index(ref, ":function:"); i >= 0 {
		name = ref[i+len(":function:"):]
	}
	name, _, _ = strings.Cut(name, ":")
	l.mu.Lock()
	defer l.mu.Unlock()
	f, ok := l.functions[name]
	if !ok {
		return Function{}, &apiError{Code: "ResourceNotFoundException", Status: http.StatusNotFound,
			Message: "Function not found: " + l.FunctionARN(name)}
	}
	return f, nil
}

// Invoke runs the named function synchronously, as Invoke with
// RequestResponse does; schedules and rules call it too.
func (l *Lambda) Invoke(ctx context.Context, name string, payload []byte) ([]byte, error) {
	f, err := l.function(name)
	if err != nil {
		return nil, err
	}
	return l.run(ctx, f, payload, false)
}

func (l *Lambda) run(ctx context.Context, f Function, payload []byte, async bool) ([]byte, error) {
	out, err := f.Handler(ctx, payload)
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.counts[f.Name]
	if async {
		c.Async++
	} else {
		c.Sync++
	}
	if err != nil {
		c.Errors++
	}
	return out, err
}

// invokeAsync is an Event invocation: Lambda queues the event and answers
// at once; the function runs after, its error seen in its logs only.
func (l *Lambda) invokeAsync(f Function, payload []byte) {
	l.async.Add(1)
	go func() {
		defer l.async.Done()
		if _, err := l.run(l.asyncCtx, f, payload, true); err != nil {
			l.opts.Logger.Error("event invocation failed", "function", f.Name, "error", err)
		}
	}()
}

// Handler is the HTTP handler of the Lambda API.
func (l *Lambda) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /2015-03-31/functions/{name}/invocations", l.serveInvoke)
	mux.HandleFunc("GET /2015-03-31/functions/{name}/configuration", l.serveConfiguration)
	mux.HandleFunc("GET /2015-03-31/event-source-mappings/", l.serveMappings)
	mux.HandleFunc("GET /2015-03-31/event-source-mappings", l.serveMappings)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		failRESTJSON(w, &apiError{Code: "UnknownOperationException", Status: http.StatusNotFound,
			Message: fmt.Sprintf("%s %s is not served locally", r.Method, r.URL.Path)})
	})
	return mux
}

// functionError is the body Lambda answers for a handler's error, with
// X-Amz-Function-Error: Unhandled.
type functionError struct {
	ErrorMessage string `json:"errorMessage"`
	ErrorType    string `json:"errorType"`
}

func errorTypeName(err error) string {
	t := reflect.TypeOf(err)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}

func (l *Lambda) serveInvoke(w http.ResponseWriter, r *http.Request) {
	f, err := l.function(r.PathValue("name"))
	if err != nil {
		failRESTJSON(w, asAPIError(err))
		return
	}
	payload, err := readBody(r)
	if err != nil {
		failRESTJSON(w, senderError("InvalidRequestContentException", "read payload: %v", err))
		return
	}
	if len(payload) == 0 {
		payload = []byte("{}")
	}
	if !json.Valid(payload) {
		failRESTJSON(w, senderError("InvalidRequestContentException", "Could not parse request body into json"))
		return
	}
	switch kind := r.Header.Get("X-Amz-Invocation-Type"); kind {
	case "", InvocationRequestResponse:
		out, err := l.run(r.Context(), f, payload, false)
		w.Header().Set("X-Amz-Executed-Version", "$LATEST")
		if err != nil {
			w.Header().Set("X-Amz-Function-Error", "Unhandled")
			writeRESTJSON(w, http.StatusOK, functionError{ErrorMessage: err.Error(), ErrorType: errorTypeName(err)})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	case InvocationEvent:
		l.invokeAsync(f, payload)
		w.WriteHeader(http.StatusAccepted)
	case invocationDryRun:
		w.WriteHeader(http.StatusNoContent)
	default:
		failRESTJSON(w, senderError("InvalidParameterValueException", "X-Amz-Invocation-Type %q: want %s, %s or %s", kind, InvocationRequestResponse, InvocationEvent, invocationDryRun))
	}
}

func (l *Lambda) serveConfiguration(w http.ResponseWriter, r *http.Request) {
	f, err := l.function(r.PathValue("name"))
	if err != nil {
		failRESTJSON(w, asAPIError(err))
		return
	}
	writeRESTJSON(w, http.StatusOK, map[string]any{
		"FunctionName":     f.Name,
		"FunctionArn":      l.FunctionARN(f.Name),
		"Runtime":          "provided.al2023",
		"Handler":          "bootstrap",
		"Timeout":          int(f.Timeout / time.Second),
		"MemorySize":       f.MemoryMB,
		"Environment":      map[string]any{"Variables": f.Environment},
		"State":            "Active",
		"LastUpdateStatus": "Successful",
		"Version":          "$LATEST",
	})
}

func (l *Lambda) serveMappings(w http.ResponseWriter, r *http.Request) {
	source, function := r.URL.Query().Get("EventSourceArn"), r.URL.Query().Get("FunctionName")
	if function != "" {
		if f, err := l.function(function); err == nil {
			function = f.Name
		}
	}
	l.mu.Lock()
	mappings := make([]map[string]any, 0, len(l.mappings))
	for _, m := range l.mappings {
		if (source != "" && m.EventSourceArn != source) || (function != "" && m.Function != function) {
			continue
		}
		mappings = append(mappings, map[string]any{
			// A stable id per mapping: Lambda's UUID.
			"UUID":                  uuid.NewSHA1(uuid.NameSpaceURL, []byte(m.EventSourceArn+"|"+m.Function)).String(),
			"EventSourceArn":        m.EventSourceArn,
			"FunctionArn":           l.FunctionARN(m.Function),
			"BatchSize":             m.BatchSize,
			"State":                 "Enabled",
			"FunctionResponseTypes": []string{"ReportBatchItemFailures"},
		})
	}
	l.mu.Unlock()
	sort.Slice(mappings, func(i, j int) bool { return mappings[i]["UUID"].(string) < mappings[j]["UUID"].(string) })
	writeRESTJSON(w, http.StatusOK, map[string]any{"EventSourceMappings": mappings})
}
