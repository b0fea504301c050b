package soak

import (
	"testing"

	"github.com/geolocate-aws/geolocate/pkg/localaws/localawstest"
)

func TestMain(m *testing.M) { localawstest.Main(m) }
