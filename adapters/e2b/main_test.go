package e2b_test

import (
	"context"
	"testing"

	"go.uber.org/goleak"
)

var ctx = context.Background()

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
