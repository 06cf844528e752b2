const CONTRACT_FIELDS = [
  ...'SessionId Type Message Mask MaskNextRoute Item ServiceCode'.split(' '),
  ...'Label DataType FieldType FieldName ClientState Data'.split(' '),
];

/** Where a service application's answer departs from the contract. */
export function checkServiceFlowResponse(response: unknown, sessionId: string): string[] {
  const issues: string[] = [];
  if (response === null || typeof response !== 'object' || Array.isArray(response))
    return ['the answer is not a JSON object'];
  const r = response as Record<string, unknown>;
  const type = typeof r.Type === 'string' ? r.Type.toLowerCase() : undefined;
  if (type === undefined) issues.push('Type is missing or not a string');
  else if (!['response', 'addtocart', 'release'].includes(type))
    issues.push(`Type "${String(r.Type)}" is not Response, AddToCart or Release`);
  if (r.SessionId !== sessionId)
    issues.push(
      `SessionId ${JSON.stringify(r.SessionId)} does not echo the session's ${JSON.stringify(sessionId)}`,
    );
  if (typeof r.Message !== 'string') issues.push('Message is missing or not a string');
  // The USSD cart: `Release` carrying the `Item` (the session ends, payment follows outside it).
  if (type === 'release') {
    if (r.Item !== undefined && r.Item !== null) {
      if (typeof r.Item !== 'object' || Array.isArray(r.Item)) issues.push('Item must be an object or null');
      else checkItem(r.Item as Record<string, unknown>, issues);
    }
    return issues;
  }
  for (const field of CONTRACT_FIELDS)
    if (!(field in r)) issues.push(`${field} is missing (send null rather than omitting it)`);
  const dataType = typeof r.DataType === 'string' ? r.DataType.toLowerCase() : undefined;
  if (dataType !== undefined && !['input', 'select', 'display'].includes(dataType))
    issues.push(`DataType "${String(r.DataType)}" is not input, select or display`);
  if ('DataType' in r && typeof r.DataType !== 'string') issues.push('DataType is not a string');
  if ('FieldType' in r && typeof r.FieldType !== 'string') issues.push('FieldType is not a string');
  if (type === 'addtocart') {
    const item = r.Item as Record<string, unknown> | null | undefined;
    if (!item || typeof item !== 'object') issues.push('Item must be an object on AddToCart');
    else checkItem(item, issues);
    if (!Array.isArray(r.Data) || r.Data.length !== 0)
      issues.push('Data must be an empty array on AddToCart');
  } else if (type === 'response') {
    if ('Item' in r && r.Item !== null) issues.push('Item must be null on a prompt');
    if (dataType === 'select') {
      if (!Array.isArray(r.Data) || r.Data.length === 0)
        issues.push('Data must be a non-empty array of options on a select prompt');
      else
        (r.Data as (Record<string, unknown> | null)[]).forEach((o, i) => {
          if (!o || mistyped(o, { Display: 'string', Value: 'string', Amount: 'number' }).length > 0)
            issues.push(`Data[${i}] must be {Display: string, Value: string, Amount: number}`);
        });
    } else if (dataType === 'input' && 'Data' in r && r.Data !== null)
      issues.push('Data must be null on an input prompt');
  }
  return issues;
}

/** The fields of `value` that are not of the type `types` names. */
function mistyped(value: Record<string, unknown>, types: Record<string, string>): string[] {
  return Object.keys(types).filter((field) => typeof value[field] !== types[field]);
}

function checkItem(item: Record<string, unknown>, issues: string[]): void {
  const types = { ItemName: 'string', Qty: 'number', Price: 'number' } as Record<string, string>;
  for (const field of mistyped(item, types)) issues.push(`Item.${field} must be a ${types[field]}`);
  if (item.ServiceData !== undefined && (item.ServiceData === null || typeof item.ServiceData !== 'object'))
    issues.push('Item.ServiceData must be an object when present');
}
