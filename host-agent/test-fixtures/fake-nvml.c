/*
 * A stand-in for libnvidia-ml.so.1 used by the host agent's tests: the real FFI code runs against
 * it. Two fake devices with state (locked clocks, power limit, an energy counter), written from the
 * public NVML API signatures (nvml.h); return codes are NVML's.
 *
 * Behaviour is read from the environment in nvmlInit_v2:
 *   FAKE_NVML_INIT=fail                           nvmlInit_v2 returns NVML_ERROR_DRIVER_NOT_LOADED
 *   FAKE_NVML_LOCK=no_permission|not_supported    for nvmlDevice{Set,Reset}GpuLockedClocks
 *   FAKE_NVML_POWER_LIMIT=no_permission|not_supported  for nvmlDeviceSetPowerManagementLimit
 *   FAKE_NVML_LOG=<path>                          every call appends one line "<function> <args>"
 *   FAKE_NVML_STATE=<path>                        the devices' locks and power limits live in this file
 *                                                 (read at the first init, rewritten after each change),
 *                                                 so they outlive the process as a real GPU's settings
 *                                                 outlive the program that made them
 *   FAKE_NVML_ENERGY=charged                      the energy counter moves only by fake_nvml_charge()
 *                                                 (default: each read advances it by 100 ms at the current power)
 * fake_nvml_setenv() sets a variable from C, so tests can switch behaviour between inits even when
 * the JS side's process.env is not the C environment (worker threads). fake_nvml_charge(index, joules)
 * adds energy to a device's counter: a fake engine in the same process books the work it did, so
 * tests know the true energy behind every counter reading.
 *
 * Build: cc -shared -fPIC -o libnvidia-ml.so.1 fake-nvml.c
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvmlReturn_t;
enum {
  NVML_SUCCESS = 0,
  NVML_ERROR_UNINITIALIZED = 1,
  NVML_ERROR_INVALID_ARGUMENT = 2,
  NVML_ERROR_NOT_SUPPORTED = 3,
  NVML_ERROR_NO_PERMISSION = 4,
  NVML_ERROR_NOT_FOUND = 6,
  NVML_ERROR_INSUFFICIENT_SIZE = 7,
  NVML_ERROR_DRIVER_NOT_LOADED = 9,
  NVML_ERROR_UNKNOWN = 999,
};
enum { NVML_CLOCK_GRAPHICS = 0, NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };

struct fake_device {
  const char *name;
  const char *uuid;
  unsigned int mem_clocks[2];
  unsigned int max_mhz, min_mhz, step_mhz;
  unsigned int idle_mw, max_mw, default_limit_mw;
  /* state */
  unsigned int locked_min, locked_max; /* 0 = not locked */
  unsigned int limit_mw;
  double energy_mj;
};
typedef struct fake_device *nvmlDevice_t;

static struct fake_device devices[2] = {
  { .name = "NVIDIA A100-SXM4-80GB", .uuid = "GPU-fa4e0000-0000-4000-8000-000000000000", .mem_clocks = { 1593, 1215 },
    .max_mhz = 1410, .min_mhz = 210, .step_mhz = 15, .idle_mw = 60000, .max_mw = 400000, .default_limit_mw = 400000 },
  { .name = "NVIDIA H100 80GB HBM3", .uuid = "GPU-fa4e0000-0000-4000-8000-000000000001", .mem_clocks = { 2619, 1593 },
    .max_mhz = 1980, .min_mhz = 345, .step_mhz = 15, .idle_mw = 75000, .max_mw = 700000, .default_limit_mw = 700000 },
};
static int init_count = 0;
static const char *STATE_FORMAT = "%u %u %u\n"; /* locked_min locked_max limit_mw, one line per device */
static int lock_error = NVML_SUCCESS;
static int limit_error = NVML_SUCCESS;
static int energy_charged = 0;

static void log_call(const char *fmt, ...) {
  const char *path = getenv("FAKE_NVML_LOG");
  if (!path || !*path) return;
  FILE *f = fopen(path, "a");
  if (!f) return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(f, fmt, ap);
  va_end(ap);
  fputc('\n', f);
  fclose(f);
}

static int error_from_env(const char *name) {
  const char *v = getenv(name);
  if (v && strcmp(v, "no_permission") == 0) return NVML_ERROR_NO_PERMISSION;
  if (v && strcmp(v, "not_supported") == 0) return NVML_ERROR_NOT_SUPPORTED;
  return NVML_SUCCESS;
}

static int device_index(nvmlDevice_t d) {
  for (int i = 0; i < 2; i++)
    if (d == &devices[i]) return i;
  return -1;
}

#define CHECK_DEVICE(d)                                  \
  do {                                                   \
    if (init_count == 0) return NVML_ERROR_UNINITIALIZED; \
    if (device_index(d) < 0) return NVML_ERROR_INVALID_ARGUMENT; \
  } while (0)

static unsigned int running_mhz(const struct fake_device *d) {
  return d->locked_max ? d->locked_max : d->max_mhz;
}

/* Power rises linearly with the running clock and is capped by the power limit. */
static unsigned int power_mw(const struct fake_device *d) {
  unsigned long long p = d->idle_mw + (unsigned long long)(d->max_mw - d->idle_mw) * running_mhz(d) / d->max_mhz;
  return p > d->limit_mw ? d->limit_mw : (unsigned int)p;
}

static void load_state(void) {
  const char *path = getenv("FAKE_NVML_STATE");
  FILE *f = path && *path ? fopen(path, "r") : NULL;
  if (!f) return;
  for (int i = 0; i < 2; i++) {
    unsigned int min, max, limit;
    if (fscanf(f, STATE_FORMAT, &min, &max, &limit) != 3) break;
    devices[i].locked_min = min;
    devices[i].locked_max = max;
    devices[i].limit_mw = limit;
  }
  fclose(f);
}

/* Written to a temp file and renamed over the state file, so a reader never sees half of it. */
static void save_state(void) {
  const char *path = getenv("FAKE_NVML_STATE");
  if (!path || !*path) return;
  char temp[4096];
  if (snprintf(temp, sizeof temp, "%s.tmp", path) >= (int)sizeof temp) return;
  FILE *f = fopen(temp, "w");
  if (!f) return;
  for (int i = 0; i < 2; i++) fprintf(f, STATE_FORMAT, devices[i].locked_min, devices[i].locked_max, devices[i].limit_mw);
  fclose(f);
  rename(temp, path);
}

int fake_nvml_setenv(const char *name, const char *value) {
  return value ? setenv(name, value, 1) : unsetenv(name);
}

nvmlReturn_t nvmlInit_v2(void) {
  log_call("nvmlInit_v2");
  const char *init = getenv("FAKE_NVML_INIT");
  if (init && strcmp(init, "fail") == 0) return NVML_ERROR_DRIVER_NOT_LOADED;
  lock_error = error_from_env("FAKE_NVML_LOCK");
  limit_error = error_from_env("FAKE_NVML_POWER_LIMIT");
  const char *energy = getenv("FAKE_NVML_ENERGY");
  energy_charged = energy && strcmp(energy, "charged") == 0;
  if (init_count++ == 0) {
    for (int i = 0; i < 2; i++) {
      devices[i].locked_min = devices[i].locked_max = 0;
      devices[i].limit_mw = devices[i].default_limit_mw;
    }
    load_state();
  }
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void) {
  log_call("nvmlShutdown");
  if (init_count == 0) return NVML_ERROR_UNINITIALIZED;
  init_count--;
  return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t r) {
  switch (r) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    default: return "Unknown Error";
  }
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) {
  log_call("nvmlDeviceGetCount_v2");
  if (init_count == 0) return NVML_ERROR_UNINITIALIZED;
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  *count = 2;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) {
  log_call("nvmlDeviceGetHandleByIndex_v2 %u", index);
  if (init_count == 0) return NVML_ERROR_UNINITIALIZED;
  if (index >= 2 || !device) return NVML_ERROR_INVALID_ARGUMENT;
  *device = &devices[index];
  return NVML_SUCCESS;
}

static nvmlReturn_t copy_string(const char *s, char *out, unsigned int length) {
  if (!out) return NVML_ERROR_INVALID_ARGUMENT;
  if (strlen(s) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  strcpy(out, s);
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int length) {
  log_call("nvmlDeviceGetName %d %u", device_index(d), length);
  CHECK_DEVICE(d);
  return copy_string(d->name, name, length);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int length) {
  log_call("nvmlDeviceGetUUID %d %u", device_index(d), length);
  CHECK_DEVICE(d);
  return copy_string(d->uuid, uuid, length);
}

/* NVML's list protocol: *count holds the capacity in and the number of entries out. */
static nvmlReturn_t fill_list(unsigned int n, unsigned int (*value)(const struct fake_device *, unsigned int),
                              const struct fake_device *d, unsigned int *count, unsigned int *out) {
  if (!count) return NVML_ERROR_INVALID_ARGUMENT;
  unsigned int capacity = *count;
  *count = n;
  if (capacity < n || !out) return NVML_ERROR_INSUFFICIENT_SIZE;
  for (unsigned int i = 0; i < n; i++) out[i] = value(d, i);
  return NVML_SUCCESS;
}

static unsigned int mem_clock_at(const struct fake_device *d, unsigned int i) { return d->mem_clocks[i]; }
static unsigned int gr_clock_at(const struct fake_device *d, unsigned int i) { return d->max_mhz - i * d->step_mhz; }

nvmlReturn_t nvmlDeviceGetSupportedMemoryClocks(nvmlDevice_t d, unsigned int *count, unsigned int *clocks) {
  log_call("nvmlDeviceGetSupportedMemoryClocks %d %u", device_index(d), count ? *count : 0);
  CHECK_DEVICE(d);
  return fill_list(2, mem_clock_at, d, count, clocks);
}

nvmlReturn_t nvmlDeviceGetSupportedGraphicsClocks(nvmlDevice_t d, unsigned int memMhz, unsigned int *count, unsigned int *clocks) {
  log_call("nvmlDeviceGetSupportedGraphicsClocks %d %u %u", device_index(d), memMhz, count ? *count : 0);
  CHECK_DEVICE(d);
  if (memMhz != d->mem_clocks[0] && memMhz != d->mem_clocks[1]) return NVML_ERROR_NOT_FOUND;
  /* The lower memory clock allows only the lower half of the graphics range. */
  unsigned int n = (d->max_mhz - d->min_mhz) / d->step_mhz + 1;
  return fill_list(memMhz == d->mem_clocks[0] ? n : n / 2, gr_clock_at, d, count, clocks);
}

nvmlReturn_t nvmlDeviceSetGpuLockedClocks(nvmlDevice_t d, unsigned int minMhz, unsigned int maxMhz) {
  log_call("nvmlDeviceSetGpuLockedClocks %d %u %u", device_index(d), minMhz, maxMhz);
  CHECK_DEVICE(d);
  if (lock_error) return lock_error;
  if (minMhz > maxMhz) return NVML_ERROR_INVALID_ARGUMENT;
  d->locked_min = minMhz < d->min_mhz ? d->min_mhz : minMhz;
  d->locked_max = maxMhz > d->max_mhz ? d->max_mhz : maxMhz;
  save_state();
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceResetGpuLockedClocks(nvmlDevice_t d) {
  log_call("nvmlDeviceResetGpuLockedClocks %d", device_index(d));
  CHECK_DEVICE(d);
  if (lock_error) return lock_error;
  d->locked_min = d->locked_max = 0;
  save_state();
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *power) {
  log_call("nvmlDeviceGetPowerUsage %d", device_index(d));
  CHECK_DEVICE(d);
  if (!power) return NVML_ERROR_INVALID_ARGUMENT;
  *power = power_mw(d);
  return NVML_SUCCESS;
}

/* By default each read advances the counter by 100 ms at the current power, so energy grows per call. */
nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long *energy) {
  log_call("nvmlDeviceGetTotalEnergyConsumption %d", device_index(d));
  CHECK_DEVICE(d);
  if (!energy) return NVML_ERROR_INVALID_ARGUMENT;
  if (!energy_charged) d->energy_mj += power_mw(d) / 10;
  *energy = (unsigned long long)d->energy_mj;
  return NVML_SUCCESS;
}

/* Adds `joules` to device `index`'s energy counter (not logged: it is the test's hand, not a driver call). */
int fake_nvml_charge(unsigned int index, double joules) {
  if (index >= 2 || joules < 0) return NVML_ERROR_INVALID_ARGUMENT;
  devices[index].energy_mj += joules * 1000.0;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t d, unsigned int *limit) {
  log_call("nvmlDeviceGetPowerManagementLimit %d", device_index(d));
  CHECK_DEVICE(d);
  if (!limit) return NVML_ERROR_INVALID_ARGUMENT;
  *limit = d->limit_mw;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceSetPowerManagementLimit(nvmlDevice_t d, unsigned int limit) {
  log_call("nvmlDeviceSetPowerManagementLimit %d %u", device_index(d), limit);
  CHECK_DEVICE(d);
  if (limit_error) return limit_error;
  if (limit < d->default_limit_mw / 4 || limit > d->default_limit_mw) return NVML_ERROR_INVALID_ARGUMENT;
  d->limit_mw = limit;
  save_state();
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t d, unsigned int *defaultLimit) {
  log_call("nvmlDeviceGetPowerManagementDefaultLimit %d", device_index(d));
  CHECK_DEVICE(d);
  if (!defaultLimit) return NVML_ERROR_INVALID_ARGUMENT;
  *defaultLimit = d->default_limit_mw;
  return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned int *clock) {
  log_call("nvmlDeviceGetClockInfo %d %d", device_index(d), type);
  CHECK_DEVICE(d);
  if (!clock) return NVML_ERROR_INVALID_ARGUMENT;
  switch (type) {
    case NVML_CLOCK_GRAPHICS:
    case NVML_CLOCK_SM: *clock = running_mhz(d); return NVML_SUCCESS;
    case NVML_CLOCK_MEM: *clock = d->mem_clocks[0]; return NVML_SUCCESS;
    default: return NVML_ERROR_INVALID_ARGUMENT;
  }
}
