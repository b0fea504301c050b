package awsapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
)

// Services are the stand-ins of one local stack, each on its own server,
// wired to each other as in an account: rules deliver to queues and
// functions, alarm actions publish to topics, topics to queues, and the
// topics' metrics land in the metric store CloudWatch serves.
type Services struct {
	SQS            *SQS
	Lambda         *Lambda
	EventBridge    *EventBridge
	CloudWatch     *CloudWatch
	SNS            *SNS
	CloudFormation *CloudFormation
	STS            *STS

	servers map[string]*Server // by endpoint variable
}

// ServicesOptions configure Start.
type ServicesOptions struct {
	// Logger receives the stand-ins' failures that no caller sees (a
	// failed Event invocation, a failed rule delivery). Default: discarded.
	Logger *slog.Logger
}

// Start starts every stand-in over metrics (CloudWatch's store).
func Start(metrics *alarmeval.Store, optFns ...func(*ServicesOptions)) (_ *Services, err error) {
	var o ServicesOptions
	for _, fn := range optFns {
		fn(&o)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Services{servers: map[string]*Server{}}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	s.SQS = NewSQS()
	s.Lambda = NewLambda(func(l *LambdaOptions) { l.Logger = o.Logger })
	s.EventBridge = NewEventBridge(func(e *EventBridgeOptions) { e.SQS, e.Lambda, e.Logger = s.SQS, s.Lambda, o.Logger })
	s.SNS = NewSNS(func(n *SNSOptions) { n.Metrics, n.SQS = metrics, s.SQS })
	s.CloudWatch = NewCloudWatch(metrics, func(c *CloudWatchOptions) {
		c.Notify = func(ctx context.Context, topic string, n AlarmNotice) error {
			_, err := s.SNS.Publish(ctx, topic, "ALARM: \""+n.Alarm+"\"", alarmMessage(n))
			return err
		}
	})
	s.CloudFormation = NewCloudFormation()
	s.STS = NewSTS()
	for env, h := range map[string]interface{ Handler() http.Handler }{
		EnvEndpointSQS: s.SQS, EnvEndpointLambda: s.Lambda, EnvEndpointEventBridge: s.EventBridge,
		EnvEndpointCloudWatch: s.CloudWatch, EnvEndpointSNS: s.SNS, EnvEndpointCloudFormation: s.CloudFormation,
		EnvEndpointSTS: s.STS,
	} {
		srv, err := Listen(h.Handler())
		if err != nil {
			return nil, err
		}
		s.servers[env] = srv
	}
	return s, nil
}

// The SDK's service-specific endpoint variables (AWS_ENDPOINT_URL_ and the
// client's ServiceID, upper case, spaces as underscores).
const (
	EnvEndpointSQS            = "AWS_ENDPOINT_URL_SQS"
	EnvEndpointLambda         = "AWS_ENDPOINT_URL_LAMBDA"
	EnvEndpointEventBridge    = "AWS_ENDPOINT_URL_EVENTBRIDGE"
	EnvEndpointCloudWatch     = "AWS_ENDPOINT_URL_CLOUDWATCH"
	EnvEndpointSNS            = "AWS_ENDPOINT_URL_SNS"
	EnvEndpointCloudFormation = "AWS_ENDPOINT_URL_CLOUDFORMATION"
	EnvEndpointSTS            = "AWS_ENDPOINT_URL_STS"
)

// Endpoints are the servers' URLs by endpoint variable.
func (s *Services) Endpoints() map[string]string {
	out := make(map[string]string, len(s.servers))
	for env, srv := range s.servers {
		out[env] = srv.Endpoint()
	}
	return out
}

// Endpoint is the URL of the server of one endpoint variable.
func (s *Services) Endpoint(env string) string {
	if srv := s.servers[env]; srv != nil {
		return srv.Endpoint()
	}
	return ""
}

// Close stops the schedules, the servers and the Event invocations.
func (s *Services) Close() error {
	if s.EventBridge != nil {
		s.EventBridge.Close()
	}
	var errs []error
	for _, env := range slices.Sorted(maps.Keys(s.servers)) {
		errs = append(errs, s.servers[env].Close())
	}
	if s.Lambda != nil {
		s.Lambda.Close()
	}
	return errors.Join(errs...)
}

// alarmMessage is the JSON an alarm action publishes (the fields of
// CloudWatch's alarm notification a reader looks at).
func alarmMessage(n AlarmNotice) string {
	b, _ := json.Marshal(map[string]string{
		"AlarmName": n.Alarm, "NewStateValue": n.NewState, "OldStateValue": n.OldState,
		"NewStateReason": n.Reason, "StateChangeTime": n.At.UTC().Format(time.RFC3339),
	})
	return string(b)
}
