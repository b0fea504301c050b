package awsapi

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"

	"github.com/geolocate-aws/geolocate/pkg/local/alarmeval"
)

// The endpoint variables are the SDK's own: a configuration loaded from
// them alone reaches the stand-ins.
func TestServicesAnswerAtTheirEndpointVariables(t *testing.T) {
	ctx := context.Background()
	s, err := Start(alarmeval.NewStore())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	topic := s.SNS.AddTopic("alarms", Subscription{Protocol: "email", Endpoint: "ops@example.com"})
	s.CloudWatch.AddAlarm(Alarm{Name: "Stalled", Actions: []string{topic}})
	for env, url := range s.Endpoints() {
		if !strings.HasPrefix(url, "http://127.0.0.1:") {
			t.Errorf("%s = %s, want 127.0.0.1", env, url)
		}
		t.Setenv(env, url)
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDLOCALTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "local")
	t.Setenv("AWS_REGION", "us-east-1")
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	id, err := sts.NewFromConfig(cfg).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil || aws.ToString(id.Account) != "000000000000" {
		t.Fatalf("GetCallerIdentity = %+v, %v", id, err)
	}
	if _, err := cloudwatch.NewFromConfig(cfg).SetAlarmState(ctx, &cloudwatch.SetAlarmStateInput{AlarmName: aws.String("Stalled"), StateValue: cwtypes.StateValueAlarm, StateReason: aws.String("test")}); err != nil {
		t.Fatal(err)
	}
	if msgs := s.SNS.Messages(); len(msgs) != 1 || !strings.Contains(msgs[0].Message, `"NewStateValue":"ALARM"`) {
		t.Errorf("alarm topic got %+v", msgs)
	}
}
