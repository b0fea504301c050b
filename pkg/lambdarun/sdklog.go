package lambdarun

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/aws/smithy-go/logging"
)

// SDKLogger routes the AWS SDK's own log lines (its Logf calls: a body it
// could not close, a response it did not validate, retry details when
// ClientLogMode asks for them) into logger, so they reach CloudWatch as the
// same JSON lines as the function's own instead of the SDK's default
// plain-text "SDK 2006/01/02 ... WARN ..." lines on stderr.
//
// The SDK has two classifications: Warn becomes slog's WARN; Debug becomes
// DEBUG, which the JSON handler drops unless LOG_LEVEL is debug. Every line
// carries source "aws-sdk" so it can be told apart from the function's.
func SDKLogger(logger *slog.Logger) logging.Logger {
	return sdkLogger{logger: logger, ctx: context.Background()}
}

type sdkLogger struct {
	logger *slog.Logger
	ctx    context.Context
}

func (l sdkLogger) Logf(classification logging.Classification, format string, v ...any) {
	level := slog.LevelDebug
	if classification == logging.Warn {
		level = slog.LevelWarn
	}
	if !l.logger.Enabled(l.ctx, level) {
		return // skip formatting what the handler would drop
	}
	l.logger.Log(l.ctx, level, fmt.Sprintf(format, v...), "source", "aws-sdk")
}

// WithContext makes the SDK pass each operation's context, so a line logged
// during an invocation carries its request id like the function's own lines.
func (l sdkLogger) WithContext(ctx context.Context) logging.Logger {
	return sdkLogger{logger: WithRequestID(ctx, l.logger), ctx: ctx}
}
