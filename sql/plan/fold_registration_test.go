package plan_test

// The executor registers the evaluator the constant-folding rule and the
// estimator use (plan.RegisterConstFolder); linking it into the test
// binary lets the golden files (testdata/plan/constant-folding.txt) fold
// as the server does.
import _ "github.com/mvserver/mvserver/sql/exec"
