package pipeline

import (
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/local/awsparts/awspartstest"
)

func TestMain(m *testing.M) { awspartstest.Main(m) }
