/**
 * The tool sandbox inside a VeRL export's Python tool process (pythonToolProcess.ts): Python that
 * the runner runs before the app's runtime, its guard and any tool code, in CPython 3.8 or later.
 * `_pact_install_sandbox(work_dir)` installs a PEP 578 audit hook that raises (PermissionError, or
 * ImportError for an import) with text naming what it refused:
 *
 *   - the network: every `socket.*` event (creation, connect, bind, DNS, sendto), and the events of
 *     urllib, http.client, ftplib, imaplib, nntplib, poplib, smtplib, telnetlib, webbrowser, syslog,
 *     sqlite3 and ensurepip;
 *   - processes: subprocess.Popen, os.system, os.exec*, os.posix_spawn*, os.spawn*, os.fork, os.forkpty,
 *     pty.spawn, os.kill, os.killpg, os.startfile, resource.setrlimit/prlimit, a new subinterpreter;
 *   - files: `open` (builtins, io, os.open, the import system) only read-only below the interpreter's
 *     own library folders (and the time zone database) or anywhere below the call's working folder;
 *     os.listdir/scandir/walk/fwalk, glob, os.chdir, the xattr reads likewise; os.mkdir/rmdir/remove/
 *     rename/link/truncate/utime/chmod/chown/chflags/setxattr/removexattr, shutil.*, tempfile.* only
 *     inside the working folder; os.symlink always. Paths are resolved as the kernel does (every
 *     symbolic link followed, with the interpreter's own lstat and readlink) and compared with the
 *     resolved roots; a relative path must not climb out of its folder (a dir_fd is a folder inside
 *     the working folder: the only ones a tool can open); devices, fifos and sockets are not opened;
 *   - ways around the hook: sys.addaudithook, sys.settrace/setprofile, sys.monitoring callbacks,
 *     gc.get_objects/get_referrers/get_referents, every ctypes.* event, mmap, and the import of
 *     ctypes, cffi, _posixshmem, _multiprocessing, _sqlite3, _ssl, readline, _curses, _dbm, _gdbm,
 *     _tkinter, nis, ossaudiodev, spwd, subinterpreters, the _test* and xx* modules; a C extension
 *     only from the library's own folders.
 *
 * What no event covers is replaced before the hook goes in (os.mknod, os.chroot, os.unshare,
 * os.setns, os.setpriority, os.sched_set*, signal.pidfd_send_signal, _posixsubprocess.fork_exec,
 * pwd's and grp's lookups, sys.addaudithook/settrace/setprofile), every builtin module a tool may import
 * is created first so that `_imp.create_builtin` cannot hand out a fresh copy with the originals, and
 * sys.path keeps the standard library only (site-packages are not the app's Pyodide's). The hook keeps
 * nothing but immutable values and the interpreter's own C functions, and calls no tool object.
 * Audit hooks are not a security boundary on their own (PEP 578): what remains is in docs/security.md
 * ("Limits"); the process boundary and the rlimits are the other two layers.
 */

/** Defines `_pact_install_sandbox(work_dir)`; the runner calls it once, then deletes it. */
export const PYTHON_AUDIT_HOOK_SOURCE = String.raw`
def _pact_install_sandbox(work_dir):
    import os, posix, sys, _imp

    # Functions no audit event covers (module: names): replaced below, before any tool runs.
    unaudited = {
        'posix': ('mknod', 'chroot', 'unshare', 'setns', 'setpriority', 'sched_setaffinity', 'sched_setparam',
                  'sched_setscheduler'),
        '_signal': ('pidfd_send_signal',),
        '_posixsubprocess': ('fork_exec',),
        'pwd': ('getpwall', 'getpwnam', 'getpwuid'),
        'grp': ('getgrall', 'getgrnam', 'getgrgid'),
    }
    # The last ones are loaded already: importing them again would bring the originals back.
    refused_modules = frozenset((
        'ctypes', '_ctypes', 'cffi', '_cffi_backend', '_posixshmem', '_multiprocessing', '_sqlite3', '_ssl',
        'readline', '_curses', '_curses_panel', '_dbm', '_gdbm', '_tkinter', 'nis', 'ossaudiodev', 'spwd',
        '_interpreters', '_interpchannels', '_interpqueues', 'nt', '_imp',
    ) + tuple(unaudited))
    refused_prefixes = ('_test', '_xx', 'xx')
    realpath = os.path.realpath

    # What a tool may read: the interpreter's own library (its folders and zip), the time zone database.
    stdlib = realpath(os.path.dirname(os.__file__))
    zip_name = 'python%d%d.zip' % sys.version_info[:2]
    reads, kept = [stdlib], []
    for entry in sys.path:
        real = realpath(entry) if entry else ''
        base = os.path.basename(real)
        if not entry or base in ('site-packages', 'dist-packages'):
            continue
        if real == stdlib or real.startswith(stdlib + '/') or base == 'lib-dynload' or base == zip_name:
            reads.append(real)
            kept.append(entry)
    for zone_dir in ('/usr/share/zoneinfo', '/usr/lib/zoneinfo', '/usr/share/lib/zoneinfo', '/etc/zoneinfo'):
        if os.path.isdir(zone_dir):
            reads.append(realpath(zone_dir))
    sys.path[:] = kept  # the standard library, as in the app's Pyodide: no site-packages
    sys.path_importer_cache.clear()
    sys.dont_write_bytecode = True
    for name in refused_modules:
        if name not in unaudited and name != '_imp':
            sys.modules.pop(name, None)

    def refuser(what, error=PermissionError):
        def refused(*args, **kwargs):
            raise error(what + ' is refused in the tool sandbox')
        refused.__name__ = refused.__qualname__ = what.rpartition('.')[2]
        return refused

    replaced = {}
    for module_name, names in unaudited.items():
        try:
            module = __import__(module_name)
        except ImportError:
            continue
        public = {'posix': 'os', '_signal': 'signal'}.get(module_name, module_name)
        error = KeyError if module_name in ('pwd', 'grp') else PermissionError  # as for an unknown user
        for name in names:
            original = module.__dict__.get(name)
            if original is None:
                continue
            replaced[id(original)] = stub = refuser(public + '.' + name, error)
            setattr(module, name, stub)
            for alias in (os, sys.modules.get('signal')):
                if alias is not None and alias.__dict__.get(name) is original:
                    setattr(alias, name, stub)
    for functions in (os.supports_dir_fd, os.supports_fd, os.supports_effective_ids, os.supports_follow_symlinks):
        for fn in [fn for fn in functions if id(fn) in replaced]:
            functions.discard(fn)
            functions.add(replaced[id(fn)])
    add_hook = sys.addaudithook
    # The hook refuses these too, but CPython drops a refused sys.addaudithook without a word, and 3.8
    # installs a refused trace function anyway.
    for name in ('addaudithook', 'settrace', 'setprofile'):
        setattr(sys, name, refuser('sys.' + name))

    # Every builtin module a tool may import, created now (_pickle and _elementtree are slow to create
    # and have pure-Python twins); create_builtin then hands out only these.
    made = {}
    for name in sys.builtin_module_names:
        if name.startswith(refused_prefixes) or name in refused_modules and name not in sys.modules:
            continue
        if name not in sys.modules and name not in ('_pickle', '_elementtree'):
            __import__(name)
        if name in sys.modules:
            made[name] = sys.modules[name]

    def create_builtin(spec, _made=made, _type=type, _str=str):
        name = spec.name
        module = _made.get(name) if _type(name) is _str else None
        if module is None:
            raise ImportError('import of ' + _str(name) + ' is refused in the tool sandbox', name=name)
        return module

    _imp.create_builtin = create_builtin

    network = (
        'socket.', 'urllib.', 'http.client.', 'ftplib.', 'imaplib.', 'nntplib.', 'poplib.', 'smtplib.',
        'telnetlib.', 'webbrowser.', 'syslog.', 'ensurepip.', 'sqlite3.',
    )
    processes = frozenset((
        'subprocess.Popen', 'os.system', 'os.exec', 'os.posix_spawn', 'os.spawn', 'os.fork', 'os.forkpty',
        'pty.spawn', 'os.kill', 'os.killpg', 'os.startfile', 'os.startfile/2', 'resource.setrlimit',
        'resource.prlimit', 'cpython.PyInterpreterState_New',
    ))
    escapes = frozenset((
        'sys.addaudithook', 'sys.settrace', 'sys.setprofile', 'sys.monitoring.register_callback', 'setopencodehook',
        'gc.get_objects', 'gc.get_referrers', 'gc.get_referents', 'mmap.__new__', 'os.add_dll_directory',
        'os.symlink',
    ))
    # Path events: (event, ((argument index, need, index of its dir_fd or -1), ...)). Needs: 'o' open,
    # 'r' read (the call's folder or the library), 'c' the call's folder or inside it, 'w' change something
    # inside it, 'm' as 'w' and a file descriptor refused (it may be a library file opened read-only).
    paths = (
        ('open', ((0, 'o', -1),)),
        ('os.listdir', ((0, 'r', -1),)), ('os.scandir', ((0, 'r', -1),)), ('os.walk', ((0, 'r', -1),)),
        ('os.fwalk', ((0, 'r', 4),)), ('glob.glob', ((0, 'r', -1),)), ('glob.glob/2', ((2, 'r', 3), (0, 'r', 3))),
        ('os.getxattr', ((0, 'r', -1),)), ('os.listxattr', ((0, 'r', -1),)), ('os.chdir', ((0, 'c', -1),)),
        ('os.mkdir', ((0, 'w', 2),)), ('os.rmdir', ((0, 'w', 1),)), ('os.remove', ((0, 'w', 1),)),
        ('os.rename', ((0, 'w', 2), (1, 'w', 3))), ('os.link', ((0, 'w', 2), (1, 'w', 3))),
        ('os.truncate', ((0, 'w', -1),)), ('os.utime', ((0, 'm', 3),)), ('os.chmod', ((0, 'm', 2),)),
        ('os.chown', ((0, 'm', 3),)), ('os.chflags', ((0, 'm', -1),)), ('os.lchflags', ((0, 'm', -1),)),
        ('os.setxattr', ((0, 'm', -1),)), ('os.removexattr', ((0, 'm', -1),)),
        ('shutil.copyfile', ((0, 'r', -1), (1, 'w', -1))), ('shutil.copymode', ((0, 'r', -1), (1, 'w', -1))),
        ('shutil.copystat', ((0, 'r', -1), (1, 'w', -1))), ('shutil.copytree', ((0, 'r', -1), (1, 'w', -1))),
        ('shutil.move', ((0, 'w', -1), (1, 'w', -1))), ('shutil.rmtree', ((0, 'w', 1),)),
        ('shutil.chown', ((0, 'w', -1),)), ('shutil.make_archive', ((0, 'w', -1), (2, 'r', -1))),
        ('shutil.unpack_archive', ((0, 'r', -1), (1, 'c', -1))),
        ('tempfile.mkstemp', ((0, 'w', -1),)), ('tempfile.mkdtemp', ((0, 'w', -1),)),
    )
    # Events whose path arguments are the caller's objects; their str paths reach the events above.
    high_level = frozenset(e for e, _ in paths if e.startswith(('os.walk', 'glob.', 'shutil.', 'tempfile.')))

    # Only immutable values and C functions, bound as defaults: a tool that reads the hook's frame (from
    # a traceback) cannot change what the next event is checked against.
    def audit(event, args, _type=type, _str=str, _bytes=bytes, _int=int, _len=len, _repr=repr,
              _decode=bytes.decode, _encoding=sys.getfilesystemencoding(), _item=tuple.__getitem__,
              _lstat=posix.lstat, _stat=posix.stat, _readlink=posix.readlink, _getcwd=posix.getcwd,
              _work=realpath(work_dir), _reads=tuple(reads),
              _write_flags=posix.O_WRONLY | posix.O_RDWR | posix.O_CREAT | posix.O_TRUNC | posix.O_APPEND,
              _network=network, _processes=processes, _escapes=escapes, _paths=paths,
              _path_events=frozenset(e for e, _ in paths), _high_level=high_level,
              _refused_modules=refused_modules, _refused_prefixes=refused_prefixes,
              _OSError=OSError, _ValueError=ValueError, _PermissionError=PermissionError, _ImportError=ImportError):
        if _type(event) is not _str:
            return
        if event.startswith(_network):
            raise _PermissionError(event + ' is refused in the tool sandbox (no network)')
        if event in _processes:
            raise _PermissionError(event + ' is refused in the tool sandbox (no new processes)')
        if event in _escapes or event.startswith(('ctypes.', 'winreg.', 'msvcrt.', '_winapi.')):
            raise _PermissionError(event + ' is refused in the tool sandbox')
        if event == 'import':
            name = args[0] if _len(args) else None
            if _type(name) is not _str:
                raise _ImportError('import of a module without a str name is refused in the tool sandbox')
            for part in name.split('.'):
                if part in _refused_modules or part.startswith(_refused_prefixes):
                    raise _ImportError('import of ' + name + ' is refused in the tool sandbox', name=name)
            if _len(args) < 2 or args[1] is None:
                return
            checks = ((1, 'x', -1),)  # a C extension loaded from a file: from the library only
        elif event in _path_events:
            for known, checks in _paths:
                if known == event:
                    break
        else:
            return
        for index, need, fd_index in checks:
            if index >= _len(args):
                continue
            path = args[index]
            dir_fd = args[fd_index] if 0 <= fd_index < _len(args) else None
            error = _ImportError if need == 'x' else _PermissionError
            if _type(path) is _int:
                if need == 'm':
                    raise error(event + ' of a file descriptor is refused in the tool sandbox')
                continue  # an open file or folder, checked when it was opened
            if path is None:
                if need not in ('r', 'c'):
                    continue
                path = '.'
            if _type(path) is _bytes:
                path = _decode(path, _encoding, 'surrogateescape')
            elif _type(path) is not _str:
                if event in _high_level:
                    continue
                raise error(event + ' of a path that is not a str or bytes is refused in the tool sandbox')
            if '\x00' in path:
                raise error(event + ' of a path with a NUL is refused in the tool sandbox')
            writes = False
            if need == 'o':
                mode = args[1] if _len(args) > 1 else None
                flags = args[2] if _len(args) > 2 else None
                writes = _type(flags) is not _int or flags & _write_flags != 0
                writes = writes or _type(mode) is _str and ('w' in mode or 'a' in mode or '+' in mode or 'x' in mode)
            doing = 'loading' if need == 'x' else event
            refusal = doing + ' ' + _repr(path) + ' is refused in the tool sandbox ('
            if not path.startswith('/'):
                # Relative to the working folder, or (dir_fd; open() does not say) to a folder inside the
                # call's: either way it must not climb out of the folder it starts from.
                depth = 0
                for part in path.split('/'):
                    if part == '..':
                        depth -= 1
                        if depth < 0:
                            raise error(refusal + 'a relative path must not leave its folder)')
                    elif part and part != '.':
                        depth += 1
                if _type(dir_fd) is _int and dir_fd != -1 and dir_fd != -100:
                    if depth == 0 and need in ('w', 'm'):
                        raise error(refusal + "the call's folder itself)")
                    continue
                try:
                    cwd = _getcwd()
                except _OSError:
                    cwd = ''
                if not cwd.startswith('/'):
                    raise error(refusal + 'no working folder)')
                path = cwd + '/' + path
            # The path as the kernel resolves it (posixpath.realpath, with C functions a tool cannot replace).
            parts = path.split('/')
            parts.reverse()
            real = ''
            hops = 0
            while parts:
                part = parts.pop()
                if not part or part == '.':
                    continue
                if part == '..':
                    real = real[: real.rfind('/')]
                    continue
                step = real + '/' + part
                try:
                    kind = _item(_lstat(step), 0) & 0o170000
                except (_OSError, _ValueError):
                    kind = 0
                if kind != 0o120000:
                    real = step
                    continue
                hops += 1
                if hops > 40:
                    raise error(refusal + 'too many symbolic links)')
                try:
                    target = _readlink(step)
                except (_OSError, _ValueError):
                    raise error(refusal + 'an unreadable symbolic link)')
                if target.startswith('/'):
                    real = ''
                more = target.split('/')
                more.reverse()
                parts.extend(more)
            real = real or '/'
            if hops:
                refusal = refusal + 'it leads to ' + _repr(real) + ', '
            if real == _work and need in ('w', 'm'):
                raise error(refusal + "the call's folder itself)")
            if need != 'x' and (real == _work or real.startswith(_work + '/')):
                if need == 'o':
                    try:
                        kind = _item(_stat(real), 0) & 0o170000
                    except (_OSError, _ValueError):
                        kind = 0o100000
                    if kind != 0o100000 and kind != 0o040000:
                        raise error(refusal + 'not a regular file or folder)')
                continue
            library = False
            for root in _reads:
                if real == root or real.startswith(root + '/'):
                    library = True
                    break
            if not library:
                raise error(refusal + "outside the call's folder)")
            if need in ('w', 'm', 'c') or writes:
                raise error(refusal + 'the Python library is read-only)')
            if need in ('o', 'x'):
                try:
                    kind = _item(_stat(real), 0) & 0o170000
                except (_OSError, _ValueError):
                    kind = 0o100000
                if kind != 0o100000:
                    raise error(refusal + "a folder outside the call's folder)")

    add_hook(audit)
`;
