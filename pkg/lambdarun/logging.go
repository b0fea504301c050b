package lambdarun

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/lambdacontext"
)

// Bounds on what one log line may carry. Values come from uploads and from
// the paid service (place names, error bodies): a hostile one must not make
// a line CloudWatch splits (it cuts events at 256 KB) or a Logs Insights
// query chokes on.
const (
	// MaxLogValue bounds one string or error value, in bytes; a longer one
	// is cut and says how long it was.
	MaxLogValue = 2 << 10
	// MaxLogLine bounds one line, in bytes. A line the value bound did not
	// keep under it (many long values, a long list) is replaced by a short
	// line saying so, with the line's start quoted.
	MaxLogLine = 16 << 10
)

// NewLogger returns a JSON logger at the level named by level ("debug",
// "info", "warn", "error"; default info). Every line is one JSON object of
// at most MaxLogLine bytes: the JSON encoding escapes control characters,
// so a value holding a newline and `"level":"ERROR"` stays inside its own
// string and cannot forge a line or a field.
func NewLogger(w io.Writer, level string) *slog.Logger {
	var lv slog.Level
	switch strings.ToLower(strings.TrimSpace(level)) {
	case "debug":
		lv = slog.LevelDebug
	case "warn", "warning":
		lv = slog.LevelWarn
	case "error":
		lv = slog.LevelError
	default:
		lv = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(lineBound{w}, &slog.HandlerOptions{Level: lv, ReplaceAttr: boundValue}))
}

// boundValue cuts a string or error value over MaxLogValue.
func boundValue(_ []string, a slog.Attr) slog.Attr {
	var s string
	switch v := a.Value.Any().(type) {
	case string:
		s = v
	case error:
		s = v.Error()
	default:
		return a
	}
	if len(s) > MaxLogValue {
		cut := s[:MaxLogValue]
		for !utf8.ValidString(cut) {
			cut = cut[:len(cut)-1]
		}
		s = fmt.Sprintf("%s…(%d bytes)", cut, len(s))
	}
	return slog.String(a.Key, s)
}

// lineBound replaces a line over MaxLogLine. slog's JSON handler writes
// each record with one Write, so p is one whole line.
type lineBound struct{ w io.Writer }

func (l lineBound) Write(p []byte) (int, error) {
	if len(p) <= MaxLogLine {
		return l.w.Write(p)
	}
	head := strings.ToValidUTF8(string(p[:MaxLogValue]), "")
	line, err := json.Marshal(struct {
		Level string `json:"level"`
		Msg   string `json:"msg"`
		Bytes int    `json:"bytes"`
		Head  string `json:"head"`
	}{"ERROR", fmt.Sprintf("log line over %d bytes replaced", MaxLogLine), len(p), head})
	if err != nil {
		return 0, err
	}
	if _, err := l.w.Write(append(line, '\n')); err != nil {
		return 0, err
	}
	return len(p), nil
}

// WithRequestID adds the invocation's request id, when ctx carries one, so
// every line of one invocation can be found together.
func WithRequestID(ctx context.Context, l *slog.Logger) *slog.Logger {
	if lc, ok := lambdacontext.FromContext(ctx); ok && lc.AwsRequestID != "" {
		return l.With("request_id", lc.AwsRequestID)
	}
	return l
}
