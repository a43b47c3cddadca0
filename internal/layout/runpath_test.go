package layout

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runEntries are the Service's methods a run over HTTP goes through: the
// handler admits it (Admit), then runs it whole (Run) or streams its rows
// (RunRows). Every SQL, insight, materialized and cached run starts at one
// of them.
var runEntries = []string{"Service.Admit", "Service.Run", "Service.RunRows"}

// TestRunPathEntersEachFileOnce: package endpoint reads in call order. On
// every call chain a run can take from runEntries, each file of the package
// is one stretch: once a call leaves a file, no call further down comes
// back into it (compute.go calling records.go calling compute.go again is
// refused), and the files the run's calls cross form no loop, so they can
// be read in one order. A call counts whether it is direct, a function
// value handed on (a single flight's closure) or an interface method that
// a type of the package implements. A helper shared by two steps lives in
// the later one (the one the earlier calls), or in a file both call and
// that calls neither.
func TestRunPathEntersEachFileOnce(t *testing.T) {
	root, module := moduleRoot(t)
	g := loadCallGraph(t, filepath.Join(root, "endpoint"), module+"/endpoint")
	require.Greater(t, len(g.funcs), 300, "the package's functions were not read")
	for _, e := range runEntries {
		require.Contains(t, g.funcs, e, "run entry")
	}
	for _, r := range g.reentries(runEntries) {
		t.Errorf("endpoint/%s is entered again on a run's path: %s; move the function called back to the file of the step it belongs to", r.file, r.chain)
	}
	if loop := g.fileLoop(runEntries); loop != nil {
		t.Errorf("the files a run's calls cross make a loop, so they cannot be read in one order: %s", strings.Join(loop, " -> "))
	}
}

// TestRunPathFindsReentry: the walk of TestRunPathEntersEachFileOnce finds a
// file entered again through a direct call, a function value and an
// interface method, and a loop between files that no one chain closes; a
// chain that stays in a file, or calls a leaf file from several, passes.
func TestRunPathFindsReentry(t *testing.T) {
	for _, c := range []struct {
		name      string
		files     map[string]string
		reentered []string
		loop      bool
	}{
		{"chain down", map[string]string{
			"a.go": "package p; func Run() { a2(); b() }; func a2() { c() }",
			"b.go": "package p; func b() { b2(); c() }; func b2() {}",
			"c.go": "package p; func c() {}",
		}, nil, false},
		{"called back", map[string]string{
			"a.go": "package p; func Run() { b() }; func helper() {}",
			"b.go": "package p; func b() { helper() }",
		}, []string{"a.go"}, true},
		// A function value counts as called by the function that names it.
		{"a function value handed on", map[string]string{
			"a.go": "package p; func Run() { do(inA) }; func inA() {}",
			"b.go": "package p; func do(f func()) { f() }; func later() { do(nil) }",
		}, nil, false},
		{"function value called back", map[string]string{
			"a.go": "package p; func Run() { b() }; func inA() {}",
			"b.go": "package p; func b() { f := inA; f() }",
		}, []string{"a.go"}, true},
		{"through an interface", map[string]string{
			"a.go": "package p; type Store interface{ Get() }; func Run(s Store) { s.Get(); b() }",
			"b.go": "package p; type mem struct{}; func (mem) Get() { c() }; func b() {}",
			"c.go": "package p; func c() { b() }",
		}, []string{"b.go"}, true},
		{"the standard library's interfaces are plumbing", map[string]string{
			"a.go": "package p; func Run(e error) { _ = e.Error(); b() }; func a2() {}",
			"b.go": "package p; type E struct{}; func (E) Error() string { a2(); return \"\" }; func b() {}",
		}, nil, false},
		{"a loop on separate chains", map[string]string{
			"a.go": "package p; func Run() { b1(); a2() }; func a2() { c() }; func a3() {}",
			"b.go": "package p; func b1() {}; func b2() { a3() }",
			"c.go": "package p; func c() { b2() }",
		}, []string{"a.go"}, true},
		{"two files loop apart", map[string]string{
			"a.go": "package p; func Run() { b1(); c2() }",
			"b.go": "package p; func b1() { c1() }; func b2() {}",
			"c.go": "package p; func c1() {}; func c2() { b2() }",
		}, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := parseCallGraph(t, c.files, "example.com/m", nil)
			var got []string
			for _, r := range g.reentries([]string{"Run"}) {
				got = append(got, r.file)
				assert.NotEmpty(t, r.chain)
			}
			assert.Equal(t, c.reentered, got)
			assert.Equal(t, c.loop, g.fileLoop([]string{"Run"}) != nil)
		})
	}
}

// callGraph holds a package's functions and which of the package's
// functions each calls or hands on as a value.
type callGraph struct {
	funcs map[string]*callNode
}

// callNode is one function or method (Type.Method) of the package.
type callNode struct {
	name, file string
	calls      []*callNode
}

// reentry is a file entered again on a chain, with the chain that does.
type reentry struct {
	file, chain string
}

// reachable returns the functions reachable from the named entries, in a
// stable order.
func (g *callGraph) reachable(entries []string) []*callNode {
	seen := map[*callNode]bool{}
	var out []*callNode
	var visit func(n *callNode)
	visit = func(n *callNode) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		out = append(out, n)
		for _, m := range n.calls {
			visit(m)
		}
	}
	for _, e := range entries {
		visit(g.funcs[e])
	}
	sort.Slice(out, func(i, j int) bool { return out[i].file+out[i].name < out[j].file+out[j].name })
	return out
}

// reentries returns, for each call from a reachable function into another
// file after which a chain comes back into the caller's file, that file
// and the chain, one a file.
func (g *callGraph) reentries(entries []string) []reentry {
	var out []reentry
	done := map[string]bool{}
	for _, f := range g.reachable(entries) {
		for _, h := range f.calls {
			if h.file == f.file || done[f.file] {
				continue
			}
			if back := pathInto(h, f.file); back != nil {
				done[f.file] = true
				chain := []string{f.file + ":" + f.name}
				for _, n := range back {
					chain = append(chain, n.file+":"+n.name)
				}
				out = append(out, reentry{f.file, strings.Join(chain, " > ")})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].file < out[j].file })
	return out
}

// pathInto returns the shortest chain of calls from n to a function of
// file, nil when there is none.
func pathInto(n *callNode, file string) []*callNode {
	from := map[*callNode]*callNode{n: nil}
	queue := []*callNode{n}
	for len(queue) > 0 {
		m := queue[0]
		queue = queue[1:]
		if m.file == file {
			var path []*callNode
			for ; m != nil; m = from[m] {
				path = append(path, m)
			}
			slices.Reverse(path)
			return path
		}
		for _, k := range m.calls {
			if _, ok := from[k]; !ok {
				from[k] = m
				queue = append(queue, k)
			}
		}
	}
	return nil
}

// fileLoop returns a loop of files that the calls reachable from entries
// cross, each with a call that leaves it for the next, nil when there is
// none.
func (g *callGraph) fileLoop(entries []string) []string {
	next := map[string][]string{}
	by := map[[2]string]string{} // a call that crosses from one file to the other
	for _, f := range g.reachable(entries) {
		for _, h := range f.calls {
			if h.file != f.file && !slices.Contains(next[f.file], h.file) {
				next[f.file] = append(next[f.file], h.file)
				by[[2]string{f.file, h.file}] = f.name + " calls " + h.name
			}
		}
	}
	files := make([]string, 0, len(next))
	for f := range next {
		files = append(files, f)
		sort.Strings(next[f])
	}
	sort.Strings(files)
	const (
		open = 1
		shut = 2
	)
	state := map[string]int{}
	var stack, loop []string
	var visit func(f string) bool
	visit = func(f string) bool {
		state[f] = open
		stack = append(stack, f)
		for _, n := range next[f] {
			switch state[n] {
			case open:
				ring := append(stack[slices.Index(stack, n):], n)
				for i, f := range ring[:len(ring)-1] {
					loop = append(loop, f+" ("+by[[2]string{f, ring[i+1]}]+")")
				}
				loop = append(loop, n)
				return true
			case 0:
				if visit(n) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[f] = shut
		return false
	}
	for _, f := range files {
		if state[f] == 0 && visit(f) {
			return loop
		}
	}
	return nil
}

// loadCallGraph type-checks the non-test files of the package in dir
// (import path path) against its dependencies' export data, and returns
// its call graph.
func loadCallGraph(t *testing.T, dir, path string) *callGraph {
	t.Helper()
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}}={{.Export}}", path).Output()
	require.NoError(t, err, "go list -export %s", path)
	exports := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		exports[k] = v
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	files := map[string]string{}
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		src, err := os.ReadFile(n)
		require.NoError(t, err)
		files[filepath.Base(n)] = string(src)
	}
	module, _, _ := strings.Cut(path, "/endpoint")
	return parseCallGraph(t, files, module, func(fset *token.FileSet) types.Importer {
		return importer.ForCompiler(fset, "gc", func(p string) (io.ReadCloser, error) {
			if exports[p] == "" {
				return nil, fmt.Errorf("no export data for %s", p)
			}
			return os.Open(exports[p])
		})
	})
}

// parseCallGraph type-checks files (name to source, one package) with the
// importer imp makes (none when nil) and returns their call graph. A call
// of an interface's method reaches the package's methods that implement
// it when the interface is the package's own or declared under module
// (driver.Store, say): the standard library's (context.Context.Value,
// error.Error) are the plumbing every file calls, not a step of a run.
func parseCallGraph(t *testing.T, files map[string]string, module string, imp func(*token.FileSet) types.Importer) *callGraph {
	t.Helper()
	fset := token.NewFileSet()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var parsed []*ast.File
	for _, n := range names {
		f, err := parser.ParseFile(fset, n, files[n], 0)
		require.NoError(t, err)
		parsed = append(parsed, f)
	}
	conf := types.Config{}
	if imp != nil {
		conf.Importer = imp(fset)
	}
	info := &types.Info{Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}}
	pkg, err := conf.Check(parsed[0].Name.Name, fset, parsed, info)
	require.NoError(t, err)

	g := &callGraph{funcs: map[string]*callNode{}}
	nodes := map[*types.Func]*callNode{}
	node := func(f *types.Func) *callNode {
		f = f.Origin()
		if n, ok := nodes[f]; ok {
			return n
		}
		n := &callNode{name: funcName(f), file: filepath.Base(fset.Position(f.Pos()).Filename)}
		nodes[f] = n
		g.funcs[n.name] = n
		return n
	}
	// The package's named types, for the methods an interface call may reach.
	var named []*types.Named
	for _, n := range pkg.Scope().Names() {
		if tn, ok := pkg.Scope().Lookup(n).(*types.TypeName); ok && !tn.IsAlias() {
			if nt, ok := tn.Type().(*types.Named); ok {
				named = append(named, nt)
			}
		}
	}
	callees := func(f *types.Func) []*types.Func {
		recv := f.Signature().Recv()
		if recv == nil {
			if f.Pkg() == pkg {
				return []*types.Func{f}
			}
			return nil
		}
		iface, ok := recv.Type().Underlying().(*types.Interface)
		if !ok {
			if f.Pkg() == pkg {
				return []*types.Func{f}
			}
			return nil
		}
		if f.Pkg() == nil || f.Pkg() != pkg && !strings.HasPrefix(f.Pkg().Path(), module+"/") {
			return nil
		}
		var out []*types.Func
		for _, nt := range named {
			if _, isIface := nt.Underlying().(*types.Interface); isIface {
				continue
			}
			if !types.Implements(nt, iface) && !types.Implements(types.NewPointer(nt), iface) {
				continue
			}
			if m, _, _ := types.LookupFieldOrMethod(types.NewPointer(nt), true, pkg, f.Name()); m != nil {
				if mf, ok := m.(*types.Func); ok && mf.Pkg() == pkg {
					out = append(out, mf)
				}
			}
		}
		return out
	}
	for _, f := range parsed {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			caller := node(info.Defs[fd.Name].(*types.Func))
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				id, ok := n.(*ast.Ident)
				if !ok {
					return true
				}
				used, ok := info.Uses[id].(*types.Func)
				if !ok {
					return true
				}
				for _, c := range callees(used) {
					if cn := node(c); !slices.Contains(caller.calls, cn) {
						caller.calls = append(caller.calls, cn)
					}
				}
				return true
			})
		}
	}
	return g
}

// funcName is f's name as the run entries give it: Name, or Type.Name for
// a method.
func funcName(f *types.Func) string {
	recv := f.Signature().Recv()
	if recv == nil {
		return f.Name()
	}
	t := recv.Type()
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	if n, ok := t.(*types.Named); ok {
		return n.Obj().Name() + "." + f.Name()
	}
	return f.Name()
}
