package awsapi

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
	"github.com/geolocate-aws/geolocate/pkg/local/sqsqueue"
)

func TestCloudWatchMetricsAndAlarmsNotifySNSThroughTheSDKClients(t *testing.T) {
	ctx := context.Background()
	store := alarmeval.NewStore()
	queues := NewSQS()
	inbox := sqsqueue.New()
	queues.AddQueue("inbox", inbox, 0, "")
	topics := NewSNS(func(o *SNSOptions) { o.Metrics, o.SQS = store, queues })
	topic := topics.AddTopic("alarms",
		Subscription{Protocol: "email", Endpoint: "ops@example.com"},
		Subscription{Protocol: "sqs", Endpoint: "arn:aws:sqs:us-east-1:000000000000:inbox"},
		Subscription{Protocol: "email", Endpoint: "new@example.com", Pending: true})
	metrics := NewCloudWatch(store, func(o *CloudWatchOptions) {
		o.Notify = func(ctx context.Context, action string, n AlarmNotice) error {
			_, err := topics.Publish(ctx, action, "ALARM: "+n.Alarm, n.Reason)
			return err
		}
	})
	metrics.AddAlarm(Alarm{Name: "JobStalled", Namespace: "Geolocate", MetricName: "JobMinutesSinceProgress", Actions: []string{topic}})
	cwCfg, _ := serve(t, metrics)
	snsCfg, _ := serve(t, topics)
	cw, sn := cloudwatch.NewFromConfig(cwCfg), sns.NewFromConfig(snsCfg)

	hour := time.Now().UTC().Truncate(time.Hour)
	dims := []cwtypes.Dimension{{Name: aws.String("Pipeline"), Value: aws.String("Geolocation")}}
	if _, err := cw.PutMetricData(ctx, &cloudwatch.PutMetricDataInput{Namespace: aws.String("Geolocate"), MetricData: []cwtypes.MetricDatum{
		{MetricName: aws.String("MonitorHealthy"), Dimensions: dims, Timestamp: aws.Time(hour.Add(time.Minute)), Value: aws.Float64(1)},
		{MetricName: aws.String("MonitorHealthy"), Dimensions: dims, Timestamp: aws.Time(hour.Add(2 * time.Minute)), Value: aws.Float64(0)},
		{MetricName: aws.String("MonitorHealthy"), Dimensions: dims, Timestamp: aws.Time(hour.Add(6 * time.Minute)), Values: []float64{1, 3}, Counts: []float64{1, 2}},
	}}); err != nil {
		t.Fatal(err)
	}
	stats, err := cw.GetMetricStatistics(ctx, &cloudwatch.GetMetricStatisticsInput{
		Namespace: aws.String("Geolocate"), MetricName: aws.String("MonitorHealthy"), Dimensions: dims,
		StartTime: aws.Time(hour), EndTime: aws.Time(hour.Add(time.Hour)), Period: aws.Int32(300),
		Statistics: []cwtypes.Statistic{cwtypes.StatisticMinimum, cwtypes.StatisticSum}, ExtendedStatistics: []string{"p50"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(stats.Datapoints) != 2 {
		t.Fatalf("datapoints = %+v, want two 5-minute periods", stats.Datapoints)
	}
	first, second := stats.Datapoints[0], stats.Datapoints[1]
	if !aws.ToTime(first.Timestamp).Equal(hour) || aws.ToFloat64(first.Minimum) != 0 || aws.ToFloat64(first.Sum) != 1 {
		t.Errorf("first period = %+v at %v, want minimum 0, sum 1 at %v", first, aws.ToTime(first.Timestamp), hour)
	}
	if aws.ToFloat64(second.Sum) != 7 || second.ExtendedStatistics["p50"] != 3 {
		t.Errorf("second period sum %v, p50 %v; want 7 and 3", aws.ToFloat64(second.Sum), second.ExtendedStatistics)
	}
	if _, err := cw.PutMetricData(ctx, &cloudwatch.PutMetricDataInput{Namespace: aws.String("AWS/SQS"), MetricData: []cwtypes.MetricDatum{{MetricName: aws.String("x"), Value: aws.Float64(1)}}}); err == nil {
		t.Error("a datum in the AWS/ namespace was accepted")
	}

	if _, err := cw.SetAlarmState(ctx, &cloudwatch.SetAlarmStateInput{AlarmName: aws.String("JobStalled"), StateValue: cwtypes.StateValueAlarm, StateReason: aws.String("smoke check")}); err != nil {
		t.Fatal(err)
	}
	var missing *cwtypes.ResourceNotFound
	if _, err := cw.SetAlarmState(ctx, &cloudwatch.SetAlarmStateInput{AlarmName: aws.String("Nope"), StateValue: cwtypes.StateValueOk, StateReason: aws.String("x")}); !errors.As(err, &missing) {
		t.Errorf("SetAlarmState of a missing alarm: %v, want ResourceNotFound", err)
	}
	alarms, err := cw.DescribeAlarms(ctx, &cloudwatch.DescribeAlarmsInput{AlarmNames: []string{"JobStalled"}})
	if err != nil || len(alarms.MetricAlarms) != 1 || alarms.MetricAlarms[0].StateValue != cwtypes.StateValueAlarm || aws.ToString(alarms.MetricAlarms[0].StateReason) != "smoke check" || alarms.MetricAlarms[0].StateUpdatedTimestamp == nil {
		t.Fatalf("DescribeAlarms = %+v, %v", alarms, err)
	}

	// The ALARM transition published once to the topic: the confirmed
	// email counts as delivered, the sqs subscription got the envelope, the
	// pending one nothing.
	if msgs := topics.Messages(); len(msgs) != 1 || msgs[0].Subject != "ALARM: JobStalled" {
		t.Fatalf("published = %+v", msgs)
	}
	if got := inbox.Receive(ctx, 10, 0); len(got) != 1 || !strings.Contains(got[0].Body, `"Message":"smoke check"`) {
		t.Errorf("sqs subscription got %+v", got)
	}
	now := time.Now()
	delivered, err := cw.GetMetricStatistics(ctx, &cloudwatch.GetMetricStatisticsInput{
		Namespace: aws.String(NamespaceSNS), MetricName: aws.String(MetricNotificationsDelivered),
		Dimensions: []cwtypes.Dimension{{Name: aws.String("TopicName"), Value: aws.String("alarms")}},
		StartTime:  aws.Time(now.Add(-time.Hour)), EndTime: aws.Time(now.Add(time.Minute)), Period: aws.Int32(3600),
		Statistics: []cwtypes.Statistic{cwtypes.StatisticSum},
	})
	if err != nil {
		t.Fatal(err)
	}
	total := 0.0
	for _, d := range delivered.Datapoints {
		total += aws.ToFloat64(d.Sum)
	}
	if total != 2 {
		t.Errorf("NumberOfNotificationsDelivered = %v, want 2 (email assumed, sqs sent)", total)
	}

	subs, err := sn.ListSubscriptionsByTopic(ctx, &sns.ListSubscriptionsByTopicInput{TopicArn: aws.String(topic)})
	if err != nil || len(subs.Subscriptions) != 3 {
		t.Fatalf("ListSubscriptionsByTopic = %+v, %v", subs, err)
	}
	pending := 0
	for _, s := range subs.Subscriptions {
		if aws.ToString(s.SubscriptionArn) == "PendingConfirmation" {
			pending++
		}
	}
	if pending != 1 {
		t.Errorf("subscriptions = %+v, want one pending", subs.Subscriptions)
	}
	pub, err := sn.Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topic), Message: aws.String("hello")})
	if err != nil || aws.ToString(pub.MessageId) == "" {
		t.Fatalf("Publish = %+v, %v", pub, err)
	}
	if _, err := sn.Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topics.TopicARN("nope")), Message: aws.String("x")}); err == nil || !strings.Contains(err.Error(), "NotFound") {
		t.Errorf("Publish to a missing topic: %v, want NotFound", err)
	}
	created, err := sn.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("other")})
	if err != nil || aws.ToString(created.TopicArn) != topics.TopicARN("other") {
		t.Errorf("CreateTopic = %+v, %v", created, err)
	}
	attrs, err := sn.GetTopicAttributes(ctx, &sns.GetTopicAttributesInput{TopicArn: aws.String(topic)})
	if err != nil || attrs.Attributes["SubscriptionsPending"] != "1" {
		t.Errorf("GetTopicAttributes = %+v, %v", attrs, err)
	}
}
