/* The build id among an ELF object's notes (see buildid.h). */
#include "buildid.h"

#include <elf.h>
#include <string.h>

int dls_build_id_from_notes(const unsigned char *p, size_t size, size_t align, char *hex)
{
    static const char digits[] = "0123456789abcdef";
    size_t at = 0;
    align = align == 8 ? 8 : 4;
    while (size - at >= sizeof(Elf64_Nhdr)) {
        Elf64_Nhdr nh;
        memcpy(&nh, p + at, sizeof nh);
        size_t name = ((size_t)nh.n_namesz + align - 1) & ~(align - 1);
        size_t desc = ((size_t)nh.n_descsz + align - 1) & ~(align - 1);
        at += sizeof nh;
        if (name > size - at || desc > size - at - name)
            return 0;
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && memcmp(p + at, "GNU", 4) == 0 && nh.n_descsz > 0) {
            size_t n = nh.n_descsz < DLS_BUILD_ID_MAX ? nh.n_descsz : DLS_BUILD_ID_MAX;
            for (size_t i = 0; i < n; i++) {
                hex[2 * i] = digits[p[at + name + i] >> 4];
                hex[2 * i + 1] = digits[p[at + name + i] & 15];
            }
            hex[2 * n] = '\0';
            return 1;
        }
        at += name + desc;
    }
    return 0;
}
