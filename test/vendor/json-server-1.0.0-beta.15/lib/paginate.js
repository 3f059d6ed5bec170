export function paginate(items, page, perPage) {
    const totalItems = items.length;
    const safePerPage = Number.isFinite(perPage) && perPage > 0 ? Math.floor(perPage) : 1;
    const pages = Math.max(1, Math.ceil(totalItems / safePerPage));
    // Ensure page is within the valid range
    const safePage = Number.isFinite(page) ? Math.floor(page) : 1;
    const currentPage = Math.max(1, Math.min(safePage, pages));
    const first = 1;
    const prev = currentPage > 1 ? currentPage - 1 : null;
    const next = currentPage < pages ? currentPage + 1 : null;
    const last = pages;
    const start = (currentPage - 1) * safePerPage;
    const end = start + safePerPage;
    const data = items.slice(start, end);
    return {
        first,
        prev,
        next,
        last,
        pages,
        items: totalItems,
        data,
    };
}
