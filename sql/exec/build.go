package exec

import (
	"github.com/mvserver/mvserver/pgerror"
	"github.com/mvserver/mvserver/sql/plan"
)

// Build creates the operator tree for a plan.
func Build(c *Ctx, n plan.Node) (Operator, error) {
	op, err := build(c, n)
	if err != nil || c.stmt == nil || c.stmt.analyze == nil {
		return op, err
	}
	return c.stmt.analyze.wrap(n, op), nil
}

func build(c *Ctx, n plan.Node) (Operator, error) {
	switch x := n.(type) {
	case *plan.Scan:
		return newScan(c, x)
	case *plan.Values:
		return newValues(c, x)
	case *plan.Filter:
		if sc, ok := x.Input.(*plan.Scan); ok && !c.RowAtATime {
			op, err := newFilteredScan(c, sc, x.Cond)
			if err != nil || op != nil {
				return op, err
			}
		}
		in, err := Build(c, x.Input)
		if err != nil {
			return nil, err
		}
		cond, err := compile(x.Cond, c)
		if err != nil {
			in.Close()
			return nil, err
		}
		return &filterOp{c: c, in: in, cond: cond}, nil
	case *plan.Project:
		windowNeeds(c, x)
		in, err := Build(c, x.Input)
		if err != nil {
			return nil, err
		}
		fns, err := compileAll(x.Exprs, c)
		if err != nil {
			in.Close()
			return nil, err
		}
		return &projectOp{in: in, fns: fns, mem: c.account("projection"), plain: c.RowAtATime}, nil
	case *plan.Aggregate:
		windowNeeds(c, x)
		if v := newVecAggregate(c, x); v != nil {
			return v, nil
		}
		in, err := Build(c, x.Input)
		if err != nil {
			return nil, err
		}
		return newAggregate(c, x, in)
	case *plan.Window:
		in, err := Build(c, x.Input)
		if err != nil {
			return nil, err
		}
		return newWindow(c, x, in)
	case *plan.Sort:
		in, err := Build(c, x.Input)
		if err != nil {
			return nil, err
		}
		return newSort(c, x, in)
	case *plan.LockRows:
		in, err := Build(c, x.Input)
		if err != nil {
			return nil, err
		}
		return newLockRows(c, x, in)
	case *plan.Limit:
		in, err := Build(c, x.Input)
		if err != nil {
			return nil, err
		}
		return newLimit(c, x, in)
	case *plan.DistinctOn:
		in, err := Build(c, x.Input)
		if err != nil {
			return nil, err
		}
		return newDistinctOn(c, x, in)
	case *plan.Distinct:
		in, err := Build(c, x.Input)
		if err != nil {
			return nil, err
		}
		return newDistinct(c, in, x.Columns()), nil
	case *plan.Join:
		if x.Kind == plan.JoinAntiNullAware {
			return newNullAwareAnti(c, x)
		}
		return newJoin(c, x)
	case *plan.TableChanges:
		return newTableChanges(c, x)
	case *plan.Rows:
		return newRowsOp(c, x)
	case *plan.Apply:
		return newApply(c, x)
	case *plan.SetOp:
		return newSetOp(c, x)
	case *plan.CTEScan:
		return newCTEScan(c, x)
	case *plan.RecursiveUnion:
		return newRecursive(c, x)
	case *plan.WorkTableScan:
		return newWorkTableScan(c, x)
	case *plan.Given:
		return newGiven(x), nil
	case *plan.KeyIn:
		return newKeyIn(c, x)
	case *plan.ProjectSet:
		return newProjectSet(c, x)
	}
	return nil, pgerror.New(pgerror.InternalError, "cannot execute plan node %T", n)
}

// Drain runs an operator to the end, calling fn per batch, and closes it.
func Drain(op Operator, fn func([]Row) error) error {
	defer op.Close()
	for {
		b, err := op.Next()
		if err != nil {
			return err
		}
		if b == nil {
			return nil
		}
		if err := fn(b); err != nil {
			return err
		}
	}
}
