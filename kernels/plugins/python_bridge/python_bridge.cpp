// Python plugin bridge: libh3p_python_plugin.so implements the candidate plugin C ABI
// (include/h3parity/candidate_plugin.h) by embedding CPython and calling a user's Python module,
// so a kernel team can qualify a Python implementation (torch, Triton, CuTe DSL, ...) without
// writing C. h3parity turns the impl spec `python:FILE.py` or `python:module_name` into: dlopen
// this library, call h3p_candidate_plugin, call create() with the argument (FILE.py made
// absolute by the host, or the module name as given), then read name, version, flags and the
// group tables, which create() fills in.
//
// Module contract (README.md has the long form):
//  - GROUPS (required): the operator groups the module provides, a list of names from
//    gemm attention swiglu adaln qk_norm rope norm residual embed head.
//  - NAME (str, default the module's name) and VERSION (str, default "0") go into every run's
//    manifest. THREAD_SAFE is ignored: every call takes the GIL, and the bridge never reports
//    H3P_PLUGIN_THREAD_SAFE.
//  - Functions named exactly like the primitives, with the C signature minus the call argument
//    and torch tensors in place of DLTensors, `out` last: linear(x, w, b, out) (b is None when
//    absent), attention(q, k, v, out), swiglu(h, out), silu(x, out), rms_norm(x, weight, eps,
//    out), norm_modulate(x, weight, eps, scale, shift, out), gather_rows(table, rows, out),
//    rope(x, cos, sin, out), gated_residual(x, gate, y, out), add(x, y, out),
//    timestep_sinusoid(t, out). A function writes every element of `out` (out.copy_(...));
//    its return value is ignored, and it must not keep references to its tensors after it
//    returns (they view h3parity's memory). Every group in GROUPS gets the same table, with an
//    entry for each function the module defines; h3parity checks that a group has every
//    primitive it calls.
//  - Tensors cross as DLPack capsules, no copies; CUDA memory stays on the device. On CUDA
//    the function runs with torch's current stream set to an ExternalStream over call->stream
//    (what `with torch.cuda.stream(...)` does, restored after), so torch ops queue on
//    h3parity's stream and may return before they complete.
//  - A FILE.py plugin is imported as module `stem(FILE)` with its directory first on sys.path
//    (sibling modules import); a module-name plugin is found on the interpreter's sys.path
//    (site-packages, PYTHONPATH; the working directory is not searched).
//  - The interpreter is the one CMake chose (H3P_PYTHON_EXECUTABLE, a venv included); its torch
//    must be the LibTorch h3parity runs, the same files: create() refuses another torch version
//    or a second libtorch_cpu mapped into the process.
//  - source_files(): every module of sys.modules under the plugin's directory (a FILE.py
//    plugin) or the top-level package's directory (a module-name plugin), the interpreter's
//    library directories excepted; h3parity hashes them into the run's identity.
//  - Any Python exception becomes H3P_ERROR with "python plugin 'ARG': <what> raised
//    <Type: message>" and the full traceback in the message, truncated to the host's buffer.
//
// The importlib work, the torch checks and the traceback formatting are a Python helper module
// (kHelperSource below); the per-call path (capsules, from_dlpack, the call) is C API only.
// One Python plugin per process (the plugin table is static); Py_Finalize is never called,
// because torch does not survive it.
//
// Tested by throwaway harnesses (not in the tree) that dlopen the library RTLD_LOCAL as the
// host does: every primitive of kernels/plugins/python_torch/torch_plugin.py on CPU tensors
// against double-precision formulas (guard bytes around outputs); linked with LibTorch, bitwise
// against the provider's ATen sequence on CPU (torch 1.13, 2.11) and CUDA (2.11, H200, on a
// stream of the host's); refusals (no GROUPS, unknown group, missing file, torch version, a
// second libtorch_cpu), a raising function's traceback, calls from several host threads.
// README.md has the per-call costs.
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <dlpack/dlpack.h>
#include <h3parity/candidate_plugin.h>

#include <array>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#ifndef H3P_PYTHON_EXECUTABLE
#error "H3P_PYTHON_EXECUTABLE (the interpreter to embed) must be defined by CMakeLists.txt"
#endif
#ifndef H3P_PYTHON_LIBRARY_SONAME
#error "H3P_PYTHON_LIBRARY_SONAME (e.g. libpython3.11.so.1.0) must be defined by CMakeLists.txt"
#endif
#if PY_VERSION_HEX < 0x03090000
#error "the Python plugin bridge needs Python 3.9 or newer"
#endif

namespace {

// The Python helper module: everything create() does in Python, and the error formatting.
constexpr const char* kHelperName = "_h3p_python_bridge";
constexpr const char* kHelperSource = R"py(
"""The Python half of h3parity's Python plugin bridge (kernels/plugins/python_bridge)."""
import importlib
import importlib.util
import os
import re
import site
import sys
import sysconfig
import traceback

torch = None  # imported by load() after the pre-import checks
_phase = "starting"
_streams = {}


class Refusal(Exception):
    """A refusal whose message says everything (no traceback). about_module: the message is
    about the plugin module (prefixed with its argument) rather than the environment."""

    def __init__(self, message, about_module=True):
        super().__init__(message)
        self.about_module = about_module


def _triple(text):
    m = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text or "")
    return (int(m[1]), int(m[2]), int(m[3] or 0)) if m else None


def _fix_hint(host):
    return (f"configure it with -DCMAKE_PREFIX_PATH=$({sys.executable} -c 'import torch; "
            f"print(torch.utils.cmake_prefix_path)'), or reconfigure with "
            f"-DH3P_PYTHON_EXECUTABLE=<a Python whose torch is {host or 'that LibTorch'}>")


def _check_version(found, where, host):
    if host and _triple(found) != _triple(host):
        raise Refusal(f"the Python torch is {found} ({where}) but h3parity runs LibTorch {host}; "
                      f"build h3parity against the same torch ({_fix_hint(host)})", False)


def _file_key(path):
    try:
        st = os.stat(path)
        return (st.st_dev, st.st_ino)
    except OSError:
        return path


def _mapped(prefix):
    """{file identity: path} of the files named prefix* mapped into this process."""
    try:
        with open("/proc/self/maps") as maps:
            paths = {f[5].strip() for f in (line.split(None, 5) for line in maps) if len(f) == 6}
    except OSError:
        return {}
    found = {}
    for path in sorted(paths):
        if os.path.basename(path).startswith(prefix):
            found.setdefault(_file_key(path), path)
    return found


def _two_builds(what, host):
    return Refusal(f"two torch builds in one process: {what}; the Python torch must be the "
                   f"LibTorch h3parity runs ({_fix_hint(host)})", False)


def _precheck_torch(host):
    """Refuses a torch that would load a second libtorch before importing it: loading two
    builds into one process tends to abort in their static initialisers."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise Refusal(f"{sys.executable} has no torch (sys.path: {os.pathsep.join(sys.path)})",
                      False)
    package = list(spec.submodule_search_locations)[0]
    try:
        with open(os.path.join(package, "version.py")) as f:
            m = re.search(r"^__version__\s*=\s*['\"]([^'\"]+)", f.read(), re.M)
    except OSError:
        m = None
    if m:
        _check_version(m[1], package, host)
    host_libs = _mapped("libtorch_cpu.so")
    lib = os.path.join(package, "lib")
    if host_libs and os.path.isdir(lib):
        ours = {_file_key(os.path.join(lib, n)): os.path.join(lib, n)
                for n in os.listdir(lib) if n.startswith("libtorch_cpu.so")}
        if ours and not ours.keys() & host_libs.keys():
            raise _two_builds(f"{' and '.join(sorted(host_libs.values()))} is mapped and the "
                              f"Python torch would load "
                              f"{' and '.join(sorted(map(os.path.realpath, ours.values())))}",
                              host)


def _import_torch(host):
    global torch
    import torch as imported
    import torch.utils.dlpack
    torch = imported
    _check_version(torch.__version__, os.path.dirname(torch.__file__), host)
    libs = _mapped("libtorch_cpu.so")
    if len(libs) > 1:
        raise _two_builds(" and ".join(sorted(libs.values())) + " are both mapped", host)


def _import_plugin(argument):
    """(module, source root, the module's own file)."""
    if argument.endswith(".py"):
        path = os.path.realpath(argument)
        if not os.path.isfile(path):
            raise Refusal(f"no such file {path}")
        name = os.path.splitext(os.path.basename(path))[0]
        taken = sys.modules.get(name)
        if taken is not None and os.path.realpath(getattr(taken, "__file__", "") or "") != path:
            raise Refusal(f"the module name '{name}' (the file's stem) is taken by {taken!r}; "
                          "rename the file")
        directory = os.path.dirname(path)
        if sys.path[:1] != [directory]:
            sys.path.insert(0, directory)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            sys.modules.pop(name, None)
            raise
        return module, directory, path
    module = importlib.import_module(argument)
    top = sys.modules[argument.partition(".")[0]]
    own = os.path.realpath(getattr(module, "__file__", None) or "")
    top_file = getattr(top, "__file__", None)
    if hasattr(top, "__path__"):  # a package: its directory
        root = os.path.dirname(top_file) if top_file else list(top.__path__)[0]
        return module, os.path.realpath(root), own
    return module, None, own  # a plain module: just its file


def _under(path, directory):
    return path == directory or path.startswith(directory.rstrip(os.sep) + os.sep)


def _source_files(root, own):
    files = {own} if own else set()
    if root is None:
        return sorted(files)
    paths = sysconfig.get_paths()
    library = [paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")]
    library += [sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix]
    library += site.getsitepackages() if hasattr(site, "getsitepackages") else []
    library = {os.path.realpath(d) for d in library if d}
    if root in library:  # a plugin directly in site-packages: never hash all of it
        return sorted(files)
    outside = [d for d in library if not _under(root, d)]
    for module in list(sys.modules.values()):
        f = getattr(module, "__file__", None)
        if not isinstance(f, str):
            continue
        f = os.path.realpath(f)
        if _under(f, root) and not any(_under(f, d) for d in outside) and os.path.isfile(f):
            files.add(f)
    return sorted(files)


def _text(module, attribute, default):
    value = getattr(module, attribute, default)
    if not isinstance(value, str) or not value:
        raise Refusal(f"{attribute} must be a non-empty str, not {value!r}")
    return value


def load(argument, host_torch, known_groups, primitives):
    """(module, NAME, VERSION, group names, functions in H3pOps order or None, source files
    newline-separated, torch.utils.dlpack.from_dlpack)."""
    global _phase
    known = " ".join(known_groups)
    _phase = "checking torch raised"
    _precheck_torch(host_torch)
    _phase = "importing torch raised"
    _import_torch(host_torch)
    _phase = "importing the module raised"
    module, root, own = _import_plugin(argument)
    _phase = "reading the module raised"
    name = _text(module, "NAME", module.__name__)
    version = _text(module, "VERSION", "0")
    groups = getattr(module, "GROUPS", None)
    if groups is None:
        raise Refusal(f"the module defines no GROUPS; set GROUPS to a list of the operator "
                      f"groups it provides, from: {known}")
    if isinstance(groups, str) or not all(isinstance(g, str) for g in groups):
        raise Refusal(f"GROUPS must be a list of group names (from: {known}), not {groups!r}")
    unknown = [g for g in groups if g not in known_groups]
    if unknown:
        raise Refusal(f"GROUPS names unknown group(s) {', '.join(unknown)}; known: {known}")
    if not groups:
        raise Refusal(f"GROUPS is empty; list the operator groups it provides, from: {known}")
    functions = []
    for p in primitives:
        f = getattr(module, p, None)
        if f is not None and not callable(f):
            raise Refusal(f"'{p}' is not a function")
        owner = str(getattr(f, "__module__", "") or "")
        if f is not None and (owner == "torch" or owner.startswith("torch.")):
            raise Refusal(f"'{p}' is {owner}.{p}, imported from torch, "
                          "not a plugin function; import it under another name")
        functions.append(f)
    if all(f is None for f in functions):
        raise Refusal(f"the module defines none of the primitives ({' '.join(primitives)})")
    files = "\n".join(_source_files(root, own))
    _phase = "loaded"
    return module, name, version, list(groups), functions, files, torch.utils.dlpack.from_dlpack


def call_on_stream(fn, args, stream, device):
    """fn(*args) with torch's current CUDA stream set to h3parity's stream: what
    `with torch.cuda.stream(ExternalStream(stream))` does (the current stream of that device,
    and the current device, restored after), in a third of its time (4 against 13 us a call on
    the H200 node)."""
    s = _streams.get((stream, device))
    if s is None:
        s = _streams[(stream, device)] = torch.cuda.ExternalStream(stream, device=device)
    previous_device = torch.cuda.current_device()
    previous = torch.cuda.current_stream(device)
    torch.cuda.set_stream(s)
    try:
        fn(*args)
    finally:
        torch.cuda.set_stream(previous)
        if previous_device != device:
            torch.cuda.set_device(previous_device)


def _user_frames(exc):
    """exc's traceback without the leading frames of this helper and importlib (they say
    nothing about the plugin); all of it where no other frame remains (a bug here), but for an
    ImportError or SyntaxError, whose own text says what and where."""
    tb = exc.__traceback__
    while tb is not None and (tb.tb_frame.f_code.co_filename in ("<h3p python bridge>",
                                                                 importlib.__file__) or
                              tb.tb_frame.f_code.co_filename.startswith("<frozen importlib")):
        tb = tb.tb_next
    return tb if tb is not None or isinstance(exc, (ImportError, SyntaxError)) else \
        exc.__traceback__


def describe_error(exc, argument, context):
    """The whole error message for exc: a refusal's text, or what raised it and the
    traceback."""
    if isinstance(exc, Refusal):
        return (f"python plugin '{argument}': " if exc.about_module else "python plugin: ") + \
            str(exc)
    lines = traceback.format_exception_only(type(exc), exc)
    summary = lines[-1].strip() if lines else type(exc).__name__
    full = "".join(traceback.format_exception(type(exc), exc, _user_frames(exc)))
    return f"python plugin '{argument}': {context or _phase} {summary}\n{full}"
)py";

// Operator group names in H3pGroup order, and the H3pPlugin fields they fill.
constexpr std::array<const char*, 10> kGroupNames = {
    "gemm", "attention", "swiglu", "adaln", "qk_norm", "rope", "norm", "residual", "embed", "head"};
constexpr std::array<const H3pOps * H3pPlugin::*, 10> kGroupFields = {
    &H3pPlugin::gemm,    &H3pPlugin::attention, &H3pPlugin::swiglu, &H3pPlugin::adaln,
    &H3pPlugin::qk_norm, &H3pPlugin::rope,      &H3pPlugin::norm,   &H3pPlugin::residual,
    &H3pPlugin::embed,   &H3pPlugin::head};

// The primitives in H3pOps order; a Python function of the same name implements each.
enum Primitive {
  kLinear,
  kAttention,
  kSwiglu,
  kSilu,
  kRmsNorm,
  kNormModulate,
  kGatherRows,
  kRope,
  kGatedResidual,
  kAdd,
  kTimestepSinusoid,
  kPrimitiveCount
};
constexpr std::array<const char*, kPrimitiveCount> kPrimitiveNames = {
    "linear",      "attention", "swiglu",         "silu", "rms_norm",         "norm_modulate",
    "gather_rows", "rope",      "gated_residual", "add",  "timestep_sinusoid"};
constexpr size_t kMaxArgs = 6;  // norm_modulate(x, weight, eps, scale, shift, out)

// A failure inside the bridge; what() is the complete message for the host.
class BridgeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An owned Python reference. Construct, reset and destroy only with the GIL held.
class PyRef {
 public:
  PyRef() = default;
  explicit PyRef(PyObject* owned) : p_(owned) {}
  PyRef(const PyRef&) = delete;
  PyRef& operator=(const PyRef&) = delete;
  PyRef(PyRef&& other) noexcept : p_(std::exchange(other.p_, nullptr)) {}
  PyRef& operator=(PyRef&& other) noexcept {
    if (this != &other) {
      Py_XDECREF(p_);
      p_ = std::exchange(other.p_, nullptr);
    }
    return *this;
  }
  ~PyRef() { Py_XDECREF(p_); }
  static PyRef borrowed(PyObject* p) {
    Py_XINCREF(p);
    return PyRef(p);
  }
  PyObject* get() const { return p_; }
  explicit operator bool() const { return p_ != nullptr; }

 private:
  PyObject* p_ = nullptr;
};

// The plugin context: one per process, never freed (name and version outlive destroy()).
struct Bridge {
  std::string argument;  // as create() received it
  std::string name, version, source_files;
  PyRef describe_error, call_on_stream, from_dlpack;  // helper functions and torch's
  PyRef module;
  std::array<PyRef, kPrimitiveCount> functions;   // NULL where the module defines none
  std::array<bool, kGroupNames.size()> groups{};  // H3pGroup order: listed in GROUPS
};

Bridge* g_bridge = nullptr;
// The one operator table every listed group shares; publish() fills the entries.
H3pOps g_ops = {sizeof(H3pOps), nullptr, nullptr, nullptr, nullptr, nullptr,
                nullptr,        nullptr, nullptr, nullptr, nullptr, nullptr};

int32_t bridge_create(const H3pCreateInfo* info, void** context, char* error, size_t error_size);
void bridge_destroy(void* context);
const char* bridge_source_files(void* context);

H3pPlugin g_plugin = {
    .struct_size = sizeof(H3pPlugin),
    .abi_version = H3P_PLUGIN_ABI_VERSION,
    .flags = 0,  // never H3P_PLUGIN_THREAD_SAFE: calls serialise on the GIL anyway
    .name = nullptr,
    .version = nullptr,
    .create = &bridge_create,
    .destroy = &bridge_destroy,
    .source_files = &bridge_source_files,
    // The group tables: publish().
    .gemm = nullptr,
    .attention = nullptr,
    .swiglu = nullptr,
    .adaln = nullptr,
    .qk_norm = nullptr,
    .rope = nullptr,
    .norm = nullptr,
    .residual = nullptr,
    .embed = nullptr,
    .head = nullptr,
};

#define H3P_HAS_FIELD(ptr, Type, field) \
  ((ptr)->struct_size >= offsetof(Type, field) + sizeof(((Type*)nullptr)->field))

// Copies message into a host buffer of size bytes, NUL-terminated, cut on a UTF-8 boundary.
void put_message(char* buffer, size_t size, const std::string& message) {
  if (buffer == nullptr || size == 0) return;
  size_t n = message.size() < size ? message.size() : size - 1;
  if (n < message.size()) {
    while (n > 0 && (static_cast<unsigned char>(message[n]) & 0xC0) == 0x80) --n;
  }
  std::memcpy(buffer, message.data(), n);
  buffer[n] = '\0';
}

void put_call_error(const H3pCall* call, const std::string& message) {
  if (H3P_HAS_FIELD(call, H3pCall, error_size)) put_message(call->error, call->error_size, message);
}

// Takes the pending exception (clearing the error indicator); empty when none is set.
PyRef take_exception() {
#if PY_VERSION_HEX >= 0x030C0000
  return PyRef(PyErr_GetRaisedException());
#else
  PyObject *type = nullptr, *value = nullptr, *traceback = nullptr;
  PyErr_Fetch(&type, &value, &traceback);
  PyErr_NormalizeException(&type, &value, &traceback);
  if (value != nullptr && traceback != nullptr) PyException_SetTraceback(value, traceback);
  Py_XDECREF(type);
  Py_XDECREF(traceback);
  return PyRef(value);
#endif
}

// The host's message for the pending exception: helper.describe_error, else its str().
// context: "<what> raised", or NULL for the helper's current create() phase. GIL held.
std::string pending_error(const Bridge& bridge, const char* context) {
  PyRef exc = take_exception();
  if (bridge.describe_error && exc) {
    PyRef argument(PyUnicode_DecodeFSDefault(bridge.argument.c_str()));
    PyRef what = context ? PyRef(PyUnicode_FromString(context)) : PyRef::borrowed(Py_None);
    if (argument && what) {
      PyRef text(PyObject_CallFunctionObjArgs(bridge.describe_error.get(), exc.get(),
                                              argument.get(), what.get(), nullptr));
      const char* utf8 = text ? PyUnicode_AsUTF8(text.get()) : nullptr;
      if (utf8 != nullptr) return utf8;
    }
    PyErr_Clear();
  }
  std::string message = "python plugin '" + bridge.argument + "': ";
  message += context ? context : "starting Python raised";
  message += " an exception";
  if (exc) {
    PyRef text(PyObject_Str(exc.get()));
    const char* utf8 = text ? PyUnicode_AsUTF8(text.get()) : nullptr;
    if (utf8 != nullptr) message += std::string(": ") + utf8;
    PyErr_Clear();
  }
  return message;
}

// Step 1 of create: make libpython's symbols global, so that extension modules (torch._C,
// math, ...), which do not link libpython, resolve against it although the host dlopened
// this library RTLD_LOCAL.
void promote_libpython() {
  if (dlopen(H3P_PYTHON_LIBRARY_SONAME, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD) != nullptr) return;
  const char* first = dlerror();
  std::string reason = first ? first : "not loaded";
  Dl_info where{};
  if (dladdr(reinterpret_cast<void*>(&Py_IsInitialized), &where) != 0 &&
      where.dli_fname != nullptr &&
      dlopen(where.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD) != nullptr) {
    return;
  }
  const std::string library = H3P_PYTHON_LIBRARY_SONAME;
  throw BridgeError("python plugin: cannot give " + library +
                    " global visibility for extension modules: " + reason);
}

void check_status(PyStatus status, const char* step) {
  if (!PyStatus_Exception(status)) return;
  const std::string executable = H3P_PYTHON_EXECUTABLE;
  std::string message =
      "python plugin: cannot start the Python interpreter " + executable + " (" + step + "): ";
  if (status.func != nullptr) message += std::string(status.func) + ": ";
  message += status.err_msg ? status.err_msg : "exit code " + std::to_string(status.exitcode);
  throw BridgeError(message);
}

// Step 2: the interpreter CMake chose, so that its prefix and site-packages (a venv's
// included, through pyvenv.cfg next to the executable) are the ones found. The host keeps
// its signal handlers and C stdio; Python's prints are unbuffered. Returns holding the GIL.
void start_python() {
  PyConfig config;
  PyConfig_InitPythonConfig(&config);
  struct Clear {
    PyConfig* config;
    ~Clear() { PyConfig_Clear(config); }
  } clear{&config};
  config.install_signal_handlers = 0;
  config.parse_argv = 0;
  config.configure_c_stdio = 0;
  config.buffered_stdio = 0;  // as python -u: without Py_Finalize a buffer is never flushed
  check_status(PyConfig_SetBytesString(&config, &config.program_name, H3P_PYTHON_EXECUTABLE),
               "program_name");
  check_status(PyConfig_SetBytesString(&config, &config.executable, H3P_PYTHON_EXECUTABLE),
               "executable");
  check_status(Py_InitializeFromConfig(&config), "initialise");
}

// Holds the GIL for create(): starts the interpreter (then releases the GIL for good at the
// end, so that primitives may take it from any host thread) or, when Python is running
// already, ensures the GIL for the calling thread.
class CreateGil {
 public:
  CreateGil() : started_here_(!Py_IsInitialized()) {
    if (started_here_) {
      start_python();
    } else {
      state_ = PyGILState_Ensure();
    }
  }
  CreateGil(const CreateGil&) = delete;
  CreateGil& operator=(const CreateGil&) = delete;
  ~CreateGil() {
    if (started_here_) {
      PyEval_SaveThread();
    } else {
      PyGILState_Release(state_);
    }
  }

 private:
  bool started_here_;
  PyGILState_STATE state_{};
};

// Steps 3-5: the helper module, helper.load() (torch checks, the import, the contract), and
// the tables. GIL held.
void load_plugin(Bridge& bridge, const std::string& host_torch) {
  PyRef code(Py_CompileString(kHelperSource, "<h3p python bridge>", Py_file_input));
  PyRef helper = code ? PyRef(PyImport_ExecCodeModule(kHelperName, code.get())) : PyRef();
  if (!helper) throw BridgeError(pending_error(bridge, "loading the bridge's helper raised"));
  bridge.describe_error = PyRef(PyObject_GetAttrString(helper.get(), "describe_error"));
  bridge.call_on_stream = PyRef(PyObject_GetAttrString(helper.get(), "call_on_stream"));
  PyRef load(PyObject_GetAttrString(helper.get(), "load"));
  if (!bridge.describe_error || !bridge.call_on_stream || !load) {
    throw BridgeError(pending_error(bridge, "loading the bridge's helper raised"));
  }

  PyRef groups(PyTuple_New(kGroupNames.size()));
  PyRef primitives(PyTuple_New(kPrimitiveCount));
  if (!groups || !primitives) throw BridgeError(pending_error(bridge, "create raised"));
  for (size_t i = 0; i < kGroupNames.size(); ++i) {
    PyTuple_SET_ITEM(groups.get(), i, PyUnicode_FromString(kGroupNames[i]));
  }
  for (size_t i = 0; i < kPrimitiveCount; ++i) {
    PyTuple_SET_ITEM(primitives.get(), i, PyUnicode_FromString(kPrimitiveNames[i]));
  }
  PyRef argument(PyUnicode_DecodeFSDefault(bridge.argument.c_str()));
  PyRef torch_version(PyUnicode_FromString(host_torch.c_str()));
  if (!argument || !torch_version) throw BridgeError(pending_error(bridge, "create raised"));
  PyRef result(PyObject_CallFunctionObjArgs(load.get(), argument.get(), torch_version.get(),
                                            groups.get(), primitives.get(), nullptr));
  if (!result) throw BridgeError(pending_error(bridge, nullptr));

  // (module, name, version, groups, functions, source files, from_dlpack); the helper has
  // checked the group names against kGroupNames.
  PyObject* module = nullptr;
  const char *name = nullptr, *version = nullptr, *files = nullptr;
  PyObject *group_list = nullptr, *function_list = nullptr, *from_dlpack = nullptr;
  if (!PyArg_ParseTuple(result.get(), "OssO!O!sO", &module, &name, &version, &PyList_Type,
                        &group_list, &PyList_Type, &function_list, &files, &from_dlpack) ||
      PyList_GET_SIZE(function_list) != kPrimitiveCount) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "helper.load() returned a bad tuple");
    throw BridgeError(pending_error(bridge, "reading the module raised"));
  }
  bridge.module = PyRef::borrowed(module);
  bridge.from_dlpack = PyRef::borrowed(from_dlpack);
  bridge.name = name;
  bridge.version = version;
  bridge.source_files = files;
  for (size_t i = 0; i < kPrimitiveCount; ++i) {
    PyObject* f = PyList_GET_ITEM(function_list, i);
    if (f != Py_None) bridge.functions[i] = PyRef::borrowed(f);
  }

  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(group_list); ++i) {
    const char* group = PyUnicode_AsUTF8(PyList_GET_ITEM(group_list, i));
    for (size_t g = 0; group != nullptr && g < kGroupNames.size(); ++g) {
      if (std::strcmp(group, kGroupNames[g]) == 0) bridge.groups[g] = true;
    }
  }
}

void publish(const Bridge& bridge);

Bridge* create_bridge(const H3pCreateInfo* info) {
  if (info == nullptr || !H3P_HAS_FIELD(info, H3pCreateInfo, argument)) {
    throw BridgeError("python plugin: create() needs an H3pCreateInfo with the argument");
  }
  if (H3P_PLUGIN_ABI_VERSION_MAJOR(info->host_abi_version) != H3P_PLUGIN_ABI_MAJOR) {
    throw BridgeError("python plugin: h3parity speaks plugin ABI " +
                      std::to_string(H3P_PLUGIN_ABI_VERSION_MAJOR(info->host_abi_version)) +
                      ".x, the bridge " + std::to_string(H3P_PLUGIN_ABI_MAJOR) + ".x");
  }
  const std::string argument = info->argument ? info->argument : "";
  if (argument.empty()) {
    throw BridgeError("python plugin: no module named (impl spec python:FILE.py or python:module)");
  }
  std::string host_torch;
  if (H3P_HAS_FIELD(info, H3pCreateInfo, torch_version) && info->torch_version) {
    host_torch = info->torch_version;
  }
  if (g_bridge != nullptr) {
    if (g_bridge->argument == argument) return g_bridge;
    throw BridgeError("python plugin '" + argument + "': this process runs the Python plugin '" +
                      g_bridge->argument + "' already; one Python plugin per process");
  }

  promote_libpython();
  CreateGil gil;  // declared before bridge: a failed bridge drops its references with the GIL
  auto bridge = std::make_unique<Bridge>();
  bridge->argument = argument;
  load_plugin(*bridge, host_torch);
  g_bridge = bridge.release();
  publish(*g_bridge);
  return g_bridge;
}

int32_t bridge_create(const H3pCreateInfo* info, void** context, char* error, size_t error_size) {
  try {
    Bridge* bridge = create_bridge(info);
    if (context != nullptr) *context = bridge;
    return H3P_OK;
  } catch (const BridgeError& e) {
    put_message(error, error_size, e.what());
  } catch (const std::exception& e) {
    put_message(error, error_size, std::string("python plugin: ") + e.what());
  } catch (...) {
    put_message(error, error_size, "python plugin: create failed");
  }
  return H3P_ERROR;
}

void bridge_destroy(void* context) {
  Bridge* bridge = context ? static_cast<Bridge*>(context) : g_bridge;
  if (bridge == nullptr || !Py_IsInitialized()) return;
  PyGILState_STATE gil = PyGILState_Ensure();
  bridge->module = PyRef();
  for (PyRef& f : bridge->functions) f = PyRef();
  bridge->from_dlpack = PyRef();
  PyGILState_Release(gil);
}

const char* bridge_source_files(void* context) {
  const Bridge* bridge = context ? static_cast<const Bridge*>(context) : g_bridge;
  return bridge ? bridge->source_files.c_str() : "";
}

// --- The per-call path ----------------------------------------------------------------------

void free_managed_tensor(DLManagedTensor* self) { std::free(self); }

// A capsule torch never consumed (from_dlpack failed first) still owns its DLManagedTensor.
void capsule_destructor(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, "dltensor")) return;
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
}

// A torch tensor viewing the host's tensor t (no copy), or empty with an exception set. The
// DLManagedTensor copies the DLTensor struct; shape and strides stay the host's (valid for the
// call: from_dlpack copies them). byte_offset is folded into data, which torch 1.x ignores.
PyRef to_torch(const Bridge& bridge, const DLTensor* t) {
  auto* managed = static_cast<DLManagedTensor*>(std::malloc(sizeof(DLManagedTensor)));
  if (managed == nullptr) return PyRef(PyErr_NoMemory());
  managed->dl_tensor = *t;
  managed->dl_tensor.data = static_cast<char*>(t->data) + t->byte_offset;
  managed->dl_tensor.byte_offset = 0;
  managed->manager_ctx = nullptr;
  managed->deleter = &free_managed_tensor;
  PyRef capsule(PyCapsule_New(managed, "dltensor", &capsule_destructor));
  if (!capsule) {
    std::free(managed);
    return PyRef();
  }
  return PyRef(PyObject_CallOneArg(bridge.from_dlpack.get(), capsule.get()));
}

// One argument of a primitive, as the C signature gives it.
struct Arg {
  enum Kind { kTensor, kOptionalTensor, kNumber } kind;
  const DLTensor* tensor = nullptr;
  double number = 0;
};
Arg tensor(const DLTensor* t) { return {Arg::kTensor, t}; }
Arg optional_tensor(const DLTensor* t) { return {Arg::kOptionalTensor, t}; }
Arg number(double value) { return {Arg::kNumber, nullptr, value}; }

// Calls the module's function for primitive with the converted arguments. GIL held; every
// reference it makes dies before it returns.
int32_t call_python(const Bridge& bridge, const H3pCall* call, Primitive primitive,
                    std::initializer_list<Arg> args) {
  const std::string what = std::string(kPrimitiveNames[primitive]) + "()";
  const PyRef& function = bridge.functions[primitive];
  if (!function) {
    put_call_error(call, "python plugin '" + bridge.argument + "': " + what +
                             " is not defined (or the plugin was destroyed)");
    return H3P_ERROR;
  }
  std::array<PyRef, kMaxArgs> objects;
  std::array<PyObject*, kMaxArgs> argv{};
  size_t n = 0;
  for (const Arg& a : args) {
    if (a.kind == Arg::kTensor && a.tensor == nullptr) {
      put_call_error(call, "python plugin '" + bridge.argument + "': " + what + " argument " +
                               std::to_string(n + 1) + " is NULL");
      return H3P_ERROR;
    }
    PyRef object = a.kind == Arg::kNumber ? PyRef(PyFloat_FromDouble(a.number))
                   : a.tensor == nullptr  ? PyRef::borrowed(Py_None)
                                          : to_torch(bridge, a.tensor);
    if (!object) {
      const std::string context =
          "converting argument " + std::to_string(n + 1) + " of " + what + " raised";
      put_call_error(call, pending_error(bridge, context.c_str()));
      return H3P_ERROR;
    }
    argv[n] = object.get();
    objects[n++] = std::move(object);
  }

  PyRef result;
  const bool on_stream = H3P_HAS_FIELD(call, H3pCall, stream) &&
                         call->device.device_type == kDLCUDA && call->stream != nullptr;
  if (on_stream) {
    PyRef tuple(PyTuple_New(static_cast<Py_ssize_t>(n)));
    PyRef stream(PyLong_FromVoidPtr(call->stream));
    PyRef device(PyLong_FromLong(call->device.device_id));
    if (tuple && stream && device) {
      for (size_t i = 0; i < n; ++i) {
        Py_INCREF(argv[i]);
        PyTuple_SET_ITEM(tuple.get(), i, argv[i]);
      }
      result =
          PyRef(PyObject_CallFunctionObjArgs(bridge.call_on_stream.get(), function.get(),
                                             tuple.get(), stream.get(), device.get(), nullptr));
    }
  } else {
    result = PyRef(PyObject_Vectorcall(function.get(), argv.data(), n, nullptr));
  }
  if (!result) {
    put_call_error(call, pending_error(bridge, (what + " raised").c_str()));
    return H3P_ERROR;
  }
  return H3P_OK;
}

int32_t invoke(const H3pCall* call, Primitive primitive, std::initializer_list<Arg> args) {
  if (call == nullptr) return H3P_ERROR;
  const Bridge* bridge = call->context ? static_cast<const Bridge*>(call->context) : g_bridge;
  if (bridge == nullptr) {
    put_call_error(call, "python plugin: a primitive was called before create()");
    return H3P_ERROR;
  }
  PyGILState_STATE gil = PyGILState_Ensure();
  int32_t status = H3P_ERROR;
  try {
    status = call_python(*bridge, call, primitive, args);
  } catch (const std::exception& e) {  // std::string allocation only; nothing crosses the ABI
    put_call_error(call, std::string("python plugin: ") + e.what());
  }
  PyGILState_Release(gil);
  return status;
}

// The trampolines: the C signatures of candidate_plugin.h onto invoke().
int32_t linear_entry(const H3pCall* c, const DLTensor* x, const DLTensor* w, const DLTensor* b,
                     DLTensor* out) {
  return invoke(c, kLinear, {tensor(x), tensor(w), optional_tensor(b), tensor(out)});
}
int32_t attention_entry(const H3pCall* c, const DLTensor* q, const DLTensor* k, const DLTensor* v,
                        DLTensor* out) {
  return invoke(c, kAttention, {tensor(q), tensor(k), tensor(v), tensor(out)});
}
int32_t swiglu_entry(const H3pCall* c, const DLTensor* h, DLTensor* out) {
  return invoke(c, kSwiglu, {tensor(h), tensor(out)});
}
int32_t silu_entry(const H3pCall* c, const DLTensor* x, DLTensor* out) {
  return invoke(c, kSilu, {tensor(x), tensor(out)});
}
int32_t rms_norm_entry(const H3pCall* c, const DLTensor* x, const DLTensor* weight, double eps,
                       DLTensor* out) {
  return invoke(c, kRmsNorm, {tensor(x), tensor(weight), number(eps), tensor(out)});
}
int32_t norm_modulate_entry(const H3pCall* c, const DLTensor* x, const DLTensor* weight, double eps,
                            const DLTensor* scale, const DLTensor* shift, DLTensor* out) {
  return invoke(
      c, kNormModulate,
      {tensor(x), tensor(weight), number(eps), tensor(scale), tensor(shift), tensor(out)});
}
int32_t gather_rows_entry(const H3pCall* c, const DLTensor* table, const DLTensor* rows,
                          DLTensor* out) {
  return invoke(c, kGatherRows, {tensor(table), tensor(rows), tensor(out)});
}
int32_t rope_entry(const H3pCall* c, const DLTensor* x, const DLTensor* cos, const DLTensor* sin,
                   DLTensor* out) {
  return invoke(c, kRope, {tensor(x), tensor(cos), tensor(sin), tensor(out)});
}
int32_t gated_residual_entry(const H3pCall* c, const DLTensor* x, const DLTensor* gate,
                             const DLTensor* y, DLTensor* out) {
  return invoke(c, kGatedResidual, {tensor(x), tensor(gate), tensor(y), tensor(out)});
}
int32_t add_entry(const H3pCall* c, const DLTensor* x, const DLTensor* y, DLTensor* out) {
  return invoke(c, kAdd, {tensor(x), tensor(y), tensor(out)});
}
int32_t timestep_sinusoid_entry(const H3pCall* c, const DLTensor* t, DLTensor* out) {
  return invoke(c, kTimestepSinusoid, {tensor(t), tensor(out)});
}

// Fills the plugin table after a successful load: every group in GROUPS shares g_ops, whose
// entries are the trampolines of the functions the module defines.
void publish(const Bridge& bridge) {
  auto has = [&](Primitive p) { return static_cast<bool>(bridge.functions[p]); };
  g_ops.linear = has(kLinear) ? &linear_entry : nullptr;
  g_ops.attention = has(kAttention) ? &attention_entry : nullptr;
  g_ops.swiglu = has(kSwiglu) ? &swiglu_entry : nullptr;
  g_ops.silu = has(kSilu) ? &silu_entry : nullptr;
  g_ops.rms_norm = has(kRmsNorm) ? &rms_norm_entry : nullptr;
  g_ops.norm_modulate = has(kNormModulate) ? &norm_modulate_entry : nullptr;
  g_ops.gather_rows = has(kGatherRows) ? &gather_rows_entry : nullptr;
  g_ops.rope = has(kRope) ? &rope_entry : nullptr;
  g_ops.gated_residual = has(kGatedResidual) ? &gated_residual_entry : nullptr;
  g_ops.add = has(kAdd) ? &add_entry : nullptr;
  g_ops.timestep_sinusoid = has(kTimestepSinusoid) ? &timestep_sinusoid_entry : nullptr;
  for (size_t g = 0; g < kGroupNames.size(); ++g) {
    g_plugin.*kGroupFields[g] = bridge.groups[g] ? &g_ops : nullptr;
  }
  g_plugin.name = bridge.name.c_str();
  g_plugin.version = bridge.version.c_str();
}

}  // namespace

// The entry point. The table is returned whatever host_abi_version says: h3parity refuses
// another major version with both numbers in its message, and create() checks it again.
extern "C" H3P_PLUGIN_EXPORT const H3pPlugin* h3p_candidate_plugin(uint32_t host_abi_version) {
  (void)host_abi_version;
  return &g_plugin;
}
