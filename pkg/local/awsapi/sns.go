package awsapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
)

// The metrics SNS publishes for a topic (namespace AWS/SNS, dimension
// TopicName), as "Monitoring Amazon SNS topics using CloudWatch" names them.
const (
	NamespaceSNS                 = "AWS/SNS"
	MetricMessagesPublished      = "NumberOfMessagesPublished"
	MetricNotificationsDelivered = "NumberOfNotificationsDelivered"
	MetricNotificationsFailed    = "NumberOfNotificationsFailed"
	dimTopicName                 = "TopicName"
	protocolSQS                  = "sqs"
	snsPendingConfirmation       = "PendingConfirmation"
)

// Subscription is one subscription of a topic. An sqs subscription is
// delivered to the SQS stand-in's queue; any other protocol (email, https)
// cannot leave the machine and counts as delivered once confirmed, which
// is what the rig assumes of it.
type Subscription struct {
	Protocol, Endpoint string
	// Pending leaves it unconfirmed (PendingConfirmation): SNS delivers
	// nothing to it.
	Pending bool
}

// Published is one message published to a topic.
type Published struct {
	TopicArn, MessageID, Subject, Message string
	At                                    time.Time
}

// SNS serves topics over awsQuery: CreateTopic, Publish (with the topic's
// NumberOfMessagesPublished and per-subscription
// NumberOfNotificationsDelivered/Failed into the metric store),
// ListSubscriptionsByTopic and GetTopicAttributes.
type SNS struct {
	opts SNSOptions

	mu        sync.Mutex
	topics    map[string][]Subscription // by ARN
	published []Published
}

// SNSOptions configure the SNS stand-in.
type SNSOptions struct {
	Region, AccountID string
	// Metrics receives the topics' metrics; nil: none.
	Metrics *alarmeval.Store
	// SQS delivers sqs subscriptions; nil: they fail.
	SQS *SQS
	Now func() time.Time
}

// NewSNS returns an SNS stand-in with no topics.
func NewSNS(optFns ...func(*SNSOptions)) *SNS {
	o := SNSOptions{Region: sqsqueue.DefaultRegion, AccountID: sqsqueue.DefaultAccountID, Now: time.Now}
	for _, fn := range optFns {
		fn(&o)
	}
	return &SNS{opts: o, topics: map[string][]Subscription{}}
}

// TopicARN is the ARN of the topic named name.
func (s *SNS) TopicARN(name string) string {
	return "arn:aws:sns:" + s.opts.Region + ":" + s.opts.AccountID + ":" + name
}

// AddTopic creates the topic named name with subs and returns its ARN.
func (s *SNS) AddTopic(name string, subs ...Subscription) string {
	arn := s.TopicARN(name)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.topics[arn] = append(s.topics[arn], subs...)
	return arn
}

// Messages are the messages published so far, in order.
func (s *SNS) Messages() []Published {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Published(nil), s.published...)
}

// Handler is the HTTP handler of the SNS API.
func (s *SNS) Handler() http.Handler {
	return awsQuery{namespace: "http://sns.amazonaws.com/doc/2010-03-31/", ops: map[string]queryOp{
		"CreateTopic":              s.createTopic,
		"Publish":                  s.publish,
		"ListSubscriptionsByTopic": s.listSubscriptionsByTopic,
		"GetTopicAttributes":       s.getTopicAttributes,
	}}
}

func topicNotFound(arn string) *apiError {
	e := senderError("NotFound", "Topic does not exist: %s", arn)
	e.Status = http.StatusNotFound
	return e
}

func (s *SNS) subscriptions(arn string) ([]Subscription, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	subs, ok := s.topics[arn]
	if !ok {
		return nil, topicNotFound(arn)
	}
	return append([]Subscription(nil), subs...), nil
}

func (s *SNS) createTopic(_ context.Context, form url.Values) (any, error) {
	name := form.Get("Name")
	if name == "" || strings.ContainsAny(name, ":/ ") {
		return nil, senderError("InvalidParameter", "Invalid parameter: Topic Name %q", name)
	}
	return struct{ TopicArn string }{s.AddTopic(name)}, nil
}

func (s *SNS) getTopicAttributes(_ context.Context, form url.Values) (any, error) {
	arn := form.Get("TopicArn")
	subs, err := s.subscriptions(arn)
	if err != nil {
		return nil, err
	}
	confirmed, pending := 0, 0
	for _, sub := range subs {
		if sub.Pending {
			pending++
		} else {
			confirmed++
		}
	}
	type entry struct{ Key, Value string }
	return struct {
		Attributes struct {
			Entries []entry `xml:"entry"`
		}
	}{Attributes: struct {
		Entries []entry `xml:"entry"`
	}{Entries: []entry{
		{"TopicArn", arn},
		{"SubscriptionsConfirmed", itoa(confirmed)},
		{"SubscriptionsPending", itoa(pending)},
	}}}, nil
}

func (s *SNS) subscriptionARN(topic string, i int, sub Subscription) string {
	if sub.Pending {
		return snsPendingConfirmation
	}
	return topic + ":" + uuid.NewSHA1(uuid.NameSpaceURL, []byte(topic+"|"+itoa(i)+"|"+sub.Endpoint)).String()
}

func (s *SNS) listSubscriptionsByTopic(_ context.Context, form url.Values) (any, error) {
	arn := form.Get("TopicArn")
	subs, err := s.subscriptions(arn)
	if err != nil {
		return nil, err
	}
	type summary struct{ SubscriptionArn, Owner, Protocol, Endpoint, TopicArn string }
	var out member[summary]
	for i, sub := range subs {
		out.Members = append(out.Members, summary{SubscriptionArn: s.subscriptionARN(arn, i, sub), Owner: s.opts.AccountID, Protocol: sub.Protocol, Endpoint: sub.Endpoint, TopicArn: arn})
	}
	sort.SliceStable(out.Members, func(i, j int) bool { return out.Members[i].Endpoint < out.Members[j].Endpoint })
	return struct{ Subscriptions member[summary] }{out}, nil
}

func (s *SNS) publish(ctx context.Context, form url.Values) (any, error) {
	arn := form.Get("TopicArn")
	if arn == "" {
		arn = form.Get("TargetArn")
	}
	if form.Get("Message") == "" {
		return nil, senderError("InvalidParameter", "Invalid parameter: Empty message")
	}
	id, err := s.Publish(ctx, arn, form.Get("Subject"), form.Get("Message"))
	if err != nil {
		return nil, err
	}
	return struct{ MessageId string }{id}, nil
}

// Publish publishes message to the topic, as the API's Publish and alarm
// actions do: it delivers to every confirmed subscription and records the
// topic's metrics.
func (s *SNS) Publish(_ context.Context, topicARN, subject, message string) (string, error) {
	subs, err := s.subscriptions(topicARN)
	if err != nil {
		return "", err
	}
	id := uuid.NewString()
	at := s.opts.Now()
	s.mu.Lock()
	s.published = append(s.published, Published{TopicArn: topicARN, MessageID: id, Subject: subject, Message: message, At: at})
	s.mu.Unlock()
	name := topicARN[strings.LastIndex(topicARN, ":")+1:]
	s.metric(MetricMessagesPublished, name, at)
	for _, sub := range subs {
		if sub.Pending {
			continue
		}
		if err := s.deliver(sub, topicARN, id, subject, message, at); err != nil {
			s.metric(MetricNotificationsFailed, name, at)
			continue
		}
		s.metric(MetricNotificationsDelivered, name, at)
	}
	return id, nil
}

func (s *SNS) deliver(sub Subscription, topicARN, id, subject, message string, at time.Time) error {
	if sub.Protocol != protocolSQS {
		return nil // cannot leave the machine: assumed delivered
	}
	if s.opts.SQS == nil {
		return topicNotFound(sub.Endpoint)
	}
	q, err := s.opts.SQS.live(sub.Endpoint[strings.LastIndex(sub.Endpoint, ":")+1:], "SendMessage")
	if err != nil {
		return err
	}
	// The SNS envelope an sqs subscription without raw delivery receives.
	body, err := json.Marshal(map[string]string{"Type": "Notification", "MessageId": id, "TopicArn": topicARN,
		"Subject": subject, "Message": message, "Timestamp": at.UTC().Format(time.RFC3339Nano)})
	if err != nil {
		return err
	}
	_, err = q.SendMessage(string(body))
	return err
}

func (s *SNS) metric(name, topic string, at time.Time) {
	if s.opts.Metrics == nil {
		return
	}
	// Well-formed by construction: the store refuses only malformed points.
	_ = s.opts.Metrics.Add(alarmeval.Datapoint{Namespace: NamespaceSNS, MetricName: name, Dimensions: map[string]string{dimTopicName: topic}, Timestamp: at, Value: 1, Unit: "Count"})
}
