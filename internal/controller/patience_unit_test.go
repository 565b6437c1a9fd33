/*
Copyright 2026 The video-operator Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package controller

import (
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// notYetWithin are the spec files whose Eventually bounds are not stretched by patience yet.
var notYetWithin = map[string]bool{}

// TestEventuallyBoundsGoThroughWithin: a bound written for a quiet machine breaks on a busy one
// (a 90 s wait for a status write did), so every Eventually of the envtest suite that sets its
// own bound, as an argument or with WithTimeout, sets it through within.
func TestEventuallyBoundsGoThroughWithin(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if notYetWithin[name] {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range unstretchedBounds(f) {
			t.Errorf("%s: an Eventually bound not given through within (suite_test.go, patience): %s", fset.Position(bad.Pos()), boundSource(fset, bad))
		}
		checked++
	}
	if checked < 20 {
		t.Fatalf("checked %d files: not the controller's specs", checked)
	}
}

// unstretchedBounds returns the bounds of Eventually calls in f that are not a call of within.
func unstretchedBounds(f *ast.File) []ast.Expr {
	var bad []ast.Expr
	isWithin := func(e ast.Expr) bool {
		c, ok := e.(*ast.CallExpr)
		if !ok {
			return false
		}
		id, ok := c.Fun.(*ast.Ident)
		return ok && id.Name == "within"
	}
	isEventually := func(e ast.Expr) bool {
		c, ok := e.(*ast.CallExpr)
		if !ok {
			return false
		}
		id, ok := c.Fun.(*ast.Ident)
		return ok && id.Name == "Eventually"
	}
	ast.Inspect(f, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if isEventually(c) && len(c.Args) >= 2 && !isWithin(c.Args[1]) {
			bad = append(bad, c.Args[1])
		}
		// Eventually(...).WithTimeout(d)
		if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "WithTimeout" && isEventually(sel.X) &&
			len(c.Args) == 1 && !isWithin(c.Args[0]) {
			bad = append(bad, c.Args[0])
		}
		return true
	})
	return bad
}

func boundSource(fset *token.FileSet, e ast.Expr) string {
	var b strings.Builder
	_ = printer.Fprint(&b, fset, e)
	return b.String()
}

// The check finds a bound given as a string, as a duration and through WithTimeout, and leaves
// alone bounds given through within and Eventually without a bound.
func TestUnstretchedBoundsFindsPlantedBounds(t *testing.T) {
	const src = `package x
func f() {
	Eventually(func() bool { return true }, "90s").Should(BeTrue())
	Eventually(done, 30*time.Second).Should(BeClosed())
	Eventually(func() bool { return true }).WithTimeout(2 * time.Second).Should(BeTrue())
	Eventually(func() bool { return true }, within(90*time.Second), "20ms").Should(BeTrue())
	Eventually(func() bool { return true }).WithTimeout(within(time.Second)).Should(BeTrue())
	Eventually(func() bool { return true }).Should(BeTrue())
	Consistently(func() bool { return true }, "1s").Should(BeTrue())
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range unstretchedBounds(f) {
		got = append(got, boundSource(fset, e))
	}
	want := []string{`"90s"`, "30 * time.Second", "2 * time.Second"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("unstretchedBounds = %q, want %q", got, want)
	}
}
