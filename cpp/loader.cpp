// Stage 1 of the extension file. The Python wheel (and other hosts) load DuckDB's symbols
// RTLD_LOCAL, so a C++ extension that borrows them cannot bind. This stage has no DuckDB
// symbols: it finds the loaded object that defines them, re-opens it RTLD_GLOBAL, then loads the
// real extension (embedded below) from a memfd and forwards the init call. Once per process.
#include <dlfcn.h>
#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <string>

#ifndef ACL_STAGE2_PATH
#error "ACL_STAGE2_PATH must name the stage-2 shared object"
#endif

extern "C" const unsigned char acl_stage2_start[];
extern "C" const unsigned char acl_stage2_end[];
asm(".section .rodata\n"
    ".balign 64\n"
    ".global acl_stage2_start\n"
    ".hidden acl_stage2_start\n"
    "acl_stage2_start:\n"
    ".incbin \"" ACL_STAGE2_PATH "\"\n"
    ".global acl_stage2_end\n"
    ".hidden acl_stage2_end\n"
    "acl_stage2_end:\n"
    ".previous\n");

namespace {
// duckdb::ExtensionLoader::GetDatabaseInstance() const
const char *const PROBE = "_ZNK6duckdb15ExtensionLoader19GetDatabaseInstanceEv";

using init_fn = void (*)(void *);
init_fn g_init = nullptr;
std::string g_error;
std::once_flag g_once;

int FindHost(struct dl_phdr_info *info, size_t, void *data) {
	const char *name = info->dlpi_name;
	void *handle = dlopen(name && *name ? name : nullptr, RTLD_LAZY | RTLD_NOLOAD);
	if (!handle) {
		return 0;
	}
	bool found = dlsym(handle, PROBE) != nullptr;
	dlclose(handle);
	if (found) {
		*static_cast<std::string *>(data) = name ? name : "";
		return 1;
	}
	return 0;
}

void LoadOnce() {
	std::string host;
	if (!dl_iterate_phdr(FindHost, &host)) {
		g_error = "acl: this host exports no DuckDB C++ symbols; use the statically linked build (make dist)";
		return;
	}
	if (!host.empty() && !dlopen(host.c_str(), RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL)) {
		g_error = std::string("acl: could not promote the host's DuckDB symbols: ") + dlerror();
		return;
	}
	int fd = memfd_create("acl_stage2", MFD_CLOEXEC);
	if (fd < 0) {
		g_error = "acl: memfd_create failed";
		return;
	}
	const unsigned char *p = acl_stage2_start;
	while (p < acl_stage2_end) {
		ssize_t n = write(fd, p, acl_stage2_end - p);
		if (n <= 0) {
			close(fd);
			g_error = "acl: could not stage the extension";
			return;
		}
		p += n;
	}
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	close(fd);
	if (!handle) {
		g_error = std::string("acl: loading the extension failed: ") + dlerror();
		return;
	}
	g_init = reinterpret_cast<init_fn>(dlsym(handle, "acl_duckdb_cpp_init"));
	if (!g_init) {
		g_error = "acl: the extension has no entry point";
	}
}
} // namespace

extern "C" __attribute__((visibility("default"))) void acl_duckdb_cpp_init(void *loader) {
	std::call_once(g_once, LoadOnce);
	if (!g_init) {
		throw std::runtime_error(g_error);
	}
	g_init(loader);
}
